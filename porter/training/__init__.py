"""Static reading of a source's training code, for train_tpu.py (see porter/outputs/training.py).

One job per module: index (functions, assignments, calls, loops of the training code), values (hyperparameters as
Python in the script's terms), argparse_flags, optimizers, param_groups, schedules, losses, clipping, loops (which
loop runs batches and epochs), reader (puts them together into a TrainingPlan), render (plan -> files through
templates/), train_support (the torch-semantics optimizers, schedules and losses copied beside train_tpu.py; read
as text, never imported by porter).
"""
