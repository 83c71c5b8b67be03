"""`kubesched tune`: search plugin weights (and args) that optimise a simulator metric with Optuna.

Optuna is an optional extra (``pip install 'kubesched[tune]'``): only ``kubesched.tune.study``
imports it, so importing this package (and the CLI that adds the subcommand) never does.
"""
