"""Trace loaders: the openb GPU trace's CSVs (``openb``) and the lists shipped with kubesched
(``bundled``). The FGD paper's experiment that replays them is ``kubesched.experiment.protocol``."""
