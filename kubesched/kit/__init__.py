"""The experiment kit: what every experiment of kubesched runs on.

- ``pool``: the grid runner, a process pool (the only one in kubesched) that runs a function over a
  list of tasks, yields results as they finish or in task order, calls a progress callback per
  task, names the task that failed and cancels what has not started.
- ``stats``: mean ± sd and the other summaries over seeds, and the paired tests (scipy).
- ``report``: JSON, CSV, Markdown and terminal tables as the experiment commands write and print them.
- ``progress``: the runs' progress on stderr, a bar with the ETA on a terminal, a line per run otherwise.

The FGD grid (``kubesched.experiment``), the edge–cloud experiment (``multicluster.experiment``),
the elastic scenario (``autoscale.experiment``), the learning track's search and evaluation
(``learn``) and ``kubesched tune`` are scenarios on it: each brings its task function and its
records; the kit imports none of them.
"""
