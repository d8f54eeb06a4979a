"""torch training semantics on Keras 3 / TensorFlow: optimizers, LR schedules, losses and gradient clipping.

Written by porter beside train_tpu.py (only the parts the training script uses). Imports TensorFlow, Keras, numpy
and the standard library only: the TPU VM needs neither porter nor torch.

- Optimizers follow torch's update rules exactly (coupled L2 `weight_decay` added to the gradient for SGD, Adam,
  Adadelta, Adagrad and RMSprop; decoupled decay for AdamW; torch's epsilon placement; SGD and RMSprop momentum that
  is not scaled by the learning rate), with per-parameter-group settings. Gradients reach `apply` already summed
  over replicas (train_step all-reduces them before clipping, as torch's DDP does).
- Schedules give torch's learning rate as a function of the optimizer step; a scheduler the source steps once per
  epoch advances every `steps_per_epoch` optimizer steps.
- Losses return `(numerator, denominator)` so that a mean over the global batch is exact across replicas
  (torch divides by the number of kept targets, or by the summed class weights).
- TPU embedding: which tables the TPU embedding API serves, its feature config and optimizer, and the substitution
  the training step makes through the runtime layers' lookup feed (ids captured from the model's own lookups,
  dequeued activations fed in their place; F.embedding / F.embedding_bag parameters through FunctionalTable);
  HostTableEmbedding runs that protocol on a host, under any strategy. A model built in TableBuild has no variable
  for its served tables (layers and F.embedding parameters): model_weights / export_weights carry weights between it
  and the host copy that holds the rows. The API's own ops, optimizer kernels and table sharding run only on a TPU.
"""

import math

import keras
import numpy as np
import tensorflow as tf

# --- section: optimizer-base


class TorchOptimizer(keras.optimizers.Optimizer):
    """Base of the torch-rule optimizers: parameter groups, coupled weight decay, maximize.

    `param_groups` is a list of dicts of per-group overrides (`lr`, `weight_decay`, `momentum`, `betas`, ...), in
    the source's order; `group_of(name, shape) -> index` says which group a parameter (torch name, Keras shape)
    belongs to. Call `bind(named_parameters)` (pairs of torch name and variable) before the first step.
    """

    # torch's weight_decay lives in `torch_weight_decay`: Keras' own `weight_decay` attribute would add a second,
    # decoupled decay in Optimizer.apply.

    def __init__(self, learning_rate, param_groups=None, group_of=None, maximize=False, name=None, **kwargs):
        super().__init__(learning_rate=learning_rate, name=name or type(self).__name__, **kwargs)
        if not hasattr(keras.optimizers.Optimizer, "_all_reduce_sum_gradients"):
            raise RuntimeError("this Keras version no longer has Optimizer._all_reduce_sum_gradients; the "
                               "torch-rule optimizers need Keras 3.x with the TensorFlow backend (tested: 3.15)")
        self.param_groups = [dict(g) for g in (param_groups or [])]
        self.group_of = group_of
        self.maximize = maximize
        self._names = {}
        self._groups = []

    def bind(self, named_parameters):
        """Remember each variable's torch parameter name, so that `group_of` can place it in its group."""
        for name, variable in named_parameters:
            self._names[self._var_key(variable)] = name

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._groups = []
        for variable in var_list:
            index = 0
            if self.group_of is not None and self.param_groups:
                name = self._names.get(self._var_key(variable))
                if name is None:
                    raise ValueError(f"{type(self).__name__}: variable {variable.path} has no torch name; call "
                                     "optimizer.bind(named_parameters(model)) before building the optimizer")
                index = self.group_of(name, tuple(variable.shape))
                if index is None:
                    raise ValueError(f"parameter {name} belongs to none of the source's parameter groups")
            self._groups.append(index)

    def _all_reduce_sum_gradients(self, grads_and_vars):
        # train_step sums the gradients over replicas (and clips them) before calling apply, as torch's DDP does;
        # Keras would otherwise sum them a second time here.
        return list(grads_and_vars)

    def hyper(self, variable, key):
        """Hyperparameter `key` of the parameter group `variable` belongs to (a Python value)."""
        groups = self._groups
        index = groups[self._get_variable_index(variable)] if groups else 0
        if self.param_groups and index < len(self.param_groups) and key in self.param_groups[index]:
            return self.param_groups[index][key]
        return getattr(self, "torch_weight_decay" if key == "weight_decay" else key)

    def group_lr(self, variable, learning_rate):
        """The learning rate of `variable`'s group: its own base lr run through the schedule, if it sets one."""
        groups = self._groups
        index = groups[self._get_variable_index(variable)] if groups else 0
        if self.param_groups and index < len(self.param_groups) and "lr" in self.param_groups[index]:
            base = self.param_groups[index]["lr"]
            schedule = self._learning_rate
            if isinstance(schedule, TorchSchedule):
                return tf.cast(schedule.lr_for_base(self._iterations, base), variable.dtype)
            return tf.constant(base, variable.dtype)
        return tf.cast(learning_rate, variable.dtype)

    def scheduled_momentum(self, default):
        """OneCycleLR (cycle_momentum) drives momentum / beta_1 through the schedule, as torch does."""
        schedule = self._learning_rate
        if isinstance(schedule, TorchSchedule) and schedule.cycles_momentum:
            return schedule.momentum(self._iterations)
        return default

    def prepare_gradient(self, gradient, variable):
        """Dense float gradient, negated for maximize, plus torch's coupled L2 term `weight_decay * param`."""
        gradient = tf.cast(tf.convert_to_tensor(gradient), variable.dtype)
        if self.maximize:
            gradient = -gradient
        decay = self.hyper(variable, "weight_decay")
        if decay and not getattr(self, "decoupled_weight_decay", False):
            gradient = gradient + decay * variable
        return gradient

    def slots(self, var_list, name):
        return [self.add_variable_from_reference(v, name=name) for v in var_list]

    def get_config(self):
        config = super().get_config()
        config.update({"maximize": self.maximize, "param_groups": self.param_groups})
        return config


# --- section: SGD (needs: optimizer-base)


class SGD(TorchOptimizer):
    """torch.optim.SGD: coupled weight decay, momentum buffer `b = m*b + (1-dampening)*g` (the first step stores g),
    optional Nesterov; `p -= lr * b`. Unlike keras.optimizers.SGD the buffer is not scaled by the learning rate,
    so a changing learning rate (a schedule) gives torch's trajectory."""

    def __init__(self, learning_rate=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False,
                 **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.momentum, self.dampening, self.nesterov = momentum, dampening, nesterov
        self.torch_weight_decay = weight_decay

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._buffers = self.slots(var_list, "momentum_buffer")

    def update_step(self, gradient, variable, learning_rate):
        lr = self.group_lr(variable, learning_rate)
        g = self.prepare_gradient(gradient, variable)
        momentum = self.scheduled_momentum(self.hyper(variable, "momentum"))
        dampening = self.hyper(variable, "dampening")
        if isinstance(momentum, (int, float)) and momentum == 0:
            self.assign_sub(variable, lr * g)
            return
        momentum = tf.cast(momentum, variable.dtype)
        buffer = self._buffers[self._get_variable_index(variable)]
        updated = momentum * buffer + (1.0 - dampening) * g
        if dampening:
            updated = tf.where(tf.equal(self._iterations, 0), g, updated)  # torch's first step: buffer = g
        self.assign(buffer, updated)
        step = g + momentum * updated if self.hyper(variable, "nesterov") else updated
        self.assign_sub(variable, lr * step)

    def get_config(self):
        config = super().get_config()
        config.update({"momentum": self.momentum, "dampening": self.dampening, "weight_decay": self.torch_weight_decay,
                       "nesterov": self.nesterov})
        return config


# --- section: Adam (needs: optimizer-base)


class Adam(TorchOptimizer):
    """torch.optim.Adam: coupled L2 weight decay; `p -= lr/bc1 * m / (sqrt(v)/sqrt(bc2) + eps)` (torch's epsilon
    placement, which differs from keras.optimizers.Adam); amsgrad keeps the running max of v."""

    decoupled_weight_decay = False

    def __init__(self, learning_rate=1e-3, beta_1=0.9, beta_2=0.999, epsilon=1e-8, weight_decay=0.0,
                 amsgrad=False, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon
        self.torch_weight_decay, self.amsgrad = weight_decay, amsgrad

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._m = self.slots(var_list, "exp_avg")
        self._v = self.slots(var_list, "exp_avg_sq")
        if self.amsgrad:
            self._v_max = self.slots(var_list, "max_exp_avg_sq")

    def hyper(self, variable, key):
        if key in ("beta_1", "beta_2"):
            groups = self._groups
            index = groups[self._get_variable_index(variable)] if groups else 0
            if self.param_groups and index < len(self.param_groups) and "betas" in self.param_groups[index]:
                return self.param_groups[index]["betas"][0 if key == "beta_1" else 1]
        return super().hyper(variable, key)

    def update_step(self, gradient, variable, learning_rate):
        dtype = variable.dtype
        lr = self.group_lr(variable, learning_rate)
        g = self.prepare_gradient(gradient, variable)
        index = self._get_variable_index(variable)
        beta_1 = tf.cast(self.scheduled_momentum(self.hyper(variable, "beta_1")), dtype)
        beta_2 = tf.cast(self.hyper(variable, "beta_2"), dtype)
        epsilon = self.hyper(variable, "epsilon")
        decay = self.hyper(variable, "weight_decay")
        if decay and self.decoupled_weight_decay:
            self.assign(variable, variable * (1.0 - lr * decay))
        step = tf.cast(self._iterations + 1, dtype)
        m, v = self._m[index], self._v[index]
        self.assign(m, beta_1 * m + (1.0 - beta_1) * g)
        self.assign(v, beta_2 * v + (1.0 - beta_2) * g * g)
        bias_correction1 = 1.0 - tf.pow(beta_1, step)
        bias_correction2 = 1.0 - tf.pow(beta_2, step)
        second = v
        if self.hyper(variable, "amsgrad"):
            v_max = self._v_max[index]
            self.assign(v_max, tf.maximum(v_max, v))
            second = v_max
        denominator = tf.sqrt(second) / tf.sqrt(bias_correction2) + epsilon
        self.assign_sub(variable, (lr / bias_correction1) * m / denominator)

    def get_config(self):
        config = super().get_config()
        config.update({"beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon,
                       "weight_decay": self.torch_weight_decay, "amsgrad": self.amsgrad})
        return config


# --- section: AdamW (needs: Adam)


class AdamW(Adam):
    """torch.optim.AdamW: Adam with decoupled weight decay `p *= 1 - lr * weight_decay` (torch default 0.01)."""

    decoupled_weight_decay = True

    def __init__(self, learning_rate=1e-3, beta_1=0.9, beta_2=0.999, epsilon=1e-8, weight_decay=1e-2,
                 amsgrad=False, **kwargs):
        super().__init__(learning_rate, beta_1, beta_2, epsilon, weight_decay, amsgrad, **kwargs)


# --- section: Adadelta (needs: optimizer-base)


class Adadelta(TorchOptimizer):
    """torch.optim.Adadelta (lr 1.0, rho 0.9, eps 1e-6 by default, coupled weight decay)."""

    def __init__(self, learning_rate=1.0, rho=0.9, epsilon=1e-6, weight_decay=0.0, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.rho, self.epsilon, self.torch_weight_decay = rho, epsilon, weight_decay

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._square_avg = self.slots(var_list, "square_avg")
        self._acc_delta = self.slots(var_list, "acc_delta")

    def update_step(self, gradient, variable, learning_rate):
        lr = self.group_lr(variable, learning_rate)
        g = self.prepare_gradient(gradient, variable)
        index = self._get_variable_index(variable)
        rho, epsilon = self.hyper(variable, "rho"), self.hyper(variable, "epsilon")
        square_avg, acc_delta = self._square_avg[index], self._acc_delta[index]
        new_square_avg = rho * square_avg + (1.0 - rho) * g * g
        self.assign(square_avg, new_square_avg)
        delta = tf.sqrt(acc_delta + epsilon) / tf.sqrt(new_square_avg + epsilon) * g
        self.assign(acc_delta, rho * acc_delta + (1.0 - rho) * delta * delta)
        self.assign_sub(variable, lr * delta)

    def get_config(self):
        config = super().get_config()
        config.update({"rho": self.rho, "epsilon": self.epsilon, "weight_decay": self.torch_weight_decay})
        return config


# --- section: Adagrad (needs: optimizer-base)


class Adagrad(TorchOptimizer):
    """torch.optim.Adagrad: `p -= lr / (1 + (t-1)*lr_decay) * g / (sqrt(sum) + eps)`; the accumulator starts at
    `initial_accumulator_value` (torch 0, Keras 0.1) and eps sits outside the square root (torch 1e-10)."""

    def __init__(self, learning_rate=1e-2, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0,
                 epsilon=1e-10, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.lr_decay, self.torch_weight_decay = lr_decay, weight_decay
        self.initial_accumulator_value, self.epsilon = initial_accumulator_value, epsilon

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        initializer = keras.initializers.Constant(self.initial_accumulator_value)
        self._sums = [self.add_variable_from_reference(v, name="sum", initializer=initializer) for v in var_list]

    def update_step(self, gradient, variable, learning_rate):
        lr = self.group_lr(variable, learning_rate)
        g = self.prepare_gradient(gradient, variable)
        accumulator = self._sums[self._get_variable_index(variable)]
        lr_decay = self.hyper(variable, "lr_decay")
        if lr_decay:
            lr = lr / (1.0 + tf.cast(self._iterations, variable.dtype) * lr_decay)
        new_sum = accumulator + g * g
        self.assign(accumulator, new_sum)
        self.assign_sub(variable, lr * g / (tf.sqrt(new_sum) + self.hyper(variable, "epsilon")))

    def get_config(self):
        config = super().get_config()
        config.update({"lr_decay": self.lr_decay, "weight_decay": self.torch_weight_decay, "epsilon": self.epsilon,
                       "initial_accumulator_value": self.initial_accumulator_value})
        return config


# --- section: RMSprop (needs: optimizer-base)


class RMSprop(TorchOptimizer):
    """torch.optim.RMSprop: `alpha` is Keras' rho (torch default 0.99), eps outside the square root (1e-8),
    centered subtracts the squared mean gradient, momentum buffer `b = m*b + g/avg` not scaled by lr."""

    def __init__(self, learning_rate=1e-2, alpha=0.99, epsilon=1e-8, weight_decay=0.0, momentum=0.0,
                 centered=False, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.alpha, self.epsilon, self.torch_weight_decay = alpha, epsilon, weight_decay
        self.momentum, self.centered = momentum, centered

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._square_avg = self.slots(var_list, "square_avg")
        self._buffers = self.slots(var_list, "momentum_buffer") if self._uses_momentum() else []
        self._grad_avg = self.slots(var_list, "grad_avg") if self._uses("centered") else []

    def _uses(self, key):
        return bool(getattr(self, key)) or any(g.get(key) for g in self.param_groups)

    def _uses_momentum(self):
        schedule = self._learning_rate
        return self._uses("momentum") or (isinstance(schedule, TorchSchedule) and schedule.cycles_momentum)

    def update_step(self, gradient, variable, learning_rate):
        lr = self.group_lr(variable, learning_rate)
        g = self.prepare_gradient(gradient, variable)
        index = self._get_variable_index(variable)
        alpha, epsilon = self.hyper(variable, "alpha"), self.hyper(variable, "epsilon")
        square_avg = self._square_avg[index]
        new_square_avg = alpha * square_avg + (1.0 - alpha) * g * g
        self.assign(square_avg, new_square_avg)
        if self.hyper(variable, "centered"):
            grad_avg = self._grad_avg[index]
            new_grad_avg = alpha * grad_avg + (1.0 - alpha) * g
            self.assign(grad_avg, new_grad_avg)
            average = tf.sqrt(new_square_avg - new_grad_avg * new_grad_avg) + epsilon
        else:
            average = tf.sqrt(new_square_avg) + epsilon
        momentum = self.scheduled_momentum(self.hyper(variable, "momentum"))
        if isinstance(momentum, (int, float)) and momentum == 0:
            self.assign_sub(variable, lr * g / average)
            return
        buffer = self._buffers[index]
        new_buffer = tf.cast(momentum, variable.dtype) * buffer + g / average
        self.assign(buffer, new_buffer)
        self.assign_sub(variable, lr * new_buffer)

    def get_config(self):
        config = super().get_config()
        config.update({"alpha": self.alpha, "epsilon": self.epsilon, "weight_decay": self.torch_weight_decay,
                       "momentum": self.momentum, "centered": self.centered})
        return config


# --- section: schedule-base


class TorchSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """torch.optim.lr_scheduler semantics as a function of the optimizer step.

    torch calls `scheduler.step()` once per batch or once per epoch; with `steps_per_epoch=N` the schedule's
    counter (torch's `last_epoch`) advances every N optimizer steps, with 1 on every step.
    """

    cycles_momentum = False

    def __init__(self, base_lr, steps_per_epoch=1):
        self.base_lr = float(base_lr)
        self.steps_per_epoch = max(int(steps_per_epoch or 1), 1)

    def count(self, step):
        """torch's `last_epoch` at optimizer step `step` (float32 tensor)."""
        step = tf.cast(step, tf.int64)
        return tf.cast(step // self.steps_per_epoch, tf.float32)

    def __call__(self, step):
        return self.lr_for_base(step, self.base_lr)

    def lr_for_base(self, step, base_lr):
        return self.lr_at(self.count(step), float(base_lr))

    def lr_at(self, t, base_lr):
        raise NotImplementedError

    def get_config(self):
        return {"base_lr": self.base_lr, "steps_per_epoch": self.steps_per_epoch}


class ConstantSchedule(TorchSchedule):
    """No scheduler in the source: the learning rate stays at its base value."""

    def lr_at(self, t, base_lr):
        return tf.constant(base_lr, tf.float32) + 0.0 * t


# --- section: StepLR (needs: schedule-base)


class StepLR(TorchSchedule):
    """torch StepLR: base_lr * gamma ** (t // step_size)."""

    def __init__(self, base_lr, step_size, gamma=0.1, steps_per_epoch=1):
        super().__init__(base_lr, steps_per_epoch)
        self.step_size, self.gamma = int(step_size), float(gamma)

    def lr_at(self, t, base_lr):
        return base_lr * tf.pow(self.gamma, tf.floor(t / self.step_size))


# --- section: MultiStepLR (needs: schedule-base)


class MultiStepLR(TorchSchedule):
    """torch MultiStepLR: base_lr * gamma ** (number of milestones <= t)."""

    def __init__(self, base_lr, milestones, gamma=0.1, steps_per_epoch=1):
        super().__init__(base_lr, steps_per_epoch)
        self.milestones, self.gamma = sorted(int(m) for m in milestones), float(gamma)

    def lr_at(self, t, base_lr):
        passed = tf.add_n([tf.cast(t >= m, tf.float32) for m in self.milestones]) if self.milestones else 0.0 * t
        return base_lr * tf.pow(self.gamma, passed)


# --- section: ExponentialLR (needs: schedule-base)


class ExponentialLR(TorchSchedule):
    """torch ExponentialLR: base_lr * gamma ** t."""

    def __init__(self, base_lr, gamma, steps_per_epoch=1):
        super().__init__(base_lr, steps_per_epoch)
        self.gamma = float(gamma)

    def lr_at(self, t, base_lr):
        return base_lr * tf.pow(self.gamma, t)


# --- section: CosineAnnealingLR (needs: schedule-base)


class CosineAnnealingLR(TorchSchedule):
    """torch CosineAnnealingLR: eta_min + (base_lr - eta_min) * (1 + cos(pi * t / T_max)) / 2. Like torch (and
    unlike keras CosineDecay) it rises again after T_max."""

    def __init__(self, base_lr, T_max, eta_min=0.0, steps_per_epoch=1):
        super().__init__(base_lr, steps_per_epoch)
        self.T_max, self.eta_min = int(T_max), float(eta_min)

    def lr_at(self, t, base_lr):
        return self.eta_min + (base_lr - self.eta_min) * (1.0 + tf.cos(math.pi * t / self.T_max)) / 2.0


# --- section: LinearLR (needs: schedule-base)


class LinearLR(TorchSchedule):
    """torch LinearLR (warm-up): base_lr * factor, the factor going linearly from start_factor to end_factor over
    total_iters counts."""

    def __init__(self, base_lr, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, steps_per_epoch=1):
        super().__init__(base_lr, steps_per_epoch)
        self.start_factor, self.end_factor, self.total_iters = float(start_factor), float(end_factor), total_iters

    def lr_at(self, t, base_lr):
        progress = tf.minimum(t, float(self.total_iters)) / float(self.total_iters)
        return base_lr * (self.start_factor + (self.end_factor - self.start_factor) * progress)


# --- section: ConstantLR (needs: schedule-base)


class ConstantLR(TorchSchedule):
    """torch ConstantLR: base_lr * factor until total_iters, then base_lr."""

    def __init__(self, base_lr, factor=1.0 / 3, total_iters=5, steps_per_epoch=1):
        super().__init__(base_lr, steps_per_epoch)
        self.factor, self.total_iters = float(factor), int(total_iters)

    def lr_at(self, t, base_lr):
        return base_lr * tf.where(t < self.total_iters, self.factor, 1.0)


# --- section: PolynomialLR (needs: schedule-base)


class PolynomialLR(TorchSchedule):
    """torch PolynomialLR: base_lr * (1 - min(t, total_iters) / total_iters) ** power."""

    def __init__(self, base_lr, total_iters=5, power=1.0, steps_per_epoch=1):
        super().__init__(base_lr, steps_per_epoch)
        self.total_iters, self.power = int(total_iters), float(power)

    def lr_at(self, t, base_lr):
        return base_lr * tf.pow(1.0 - tf.minimum(t, float(self.total_iters)) / self.total_iters, self.power)


# --- section: OneCycleLR (needs: schedule-base)


class OneCycleLR(TorchSchedule):
    """torch OneCycleLR: warm up from max_lr/div_factor to max_lr over pct_start of total_steps, then anneal to
    initial_lr/final_div_factor ('cos' or 'linear'); with cycle_momentum it also drives momentum (SGD, RMSprop) or
    beta_1 (Adam) between max_momentum and base_momentum. The optimizer's own lr is ignored, as in torch."""

    def __init__(self, base_lr, max_lr, total_steps, pct_start=0.3, anneal_strategy="cos", cycle_momentum=True,
                 base_momentum=0.85, max_momentum=0.95, div_factor=25.0, final_div_factor=1e4, three_phase=False,
                 steps_per_epoch=1):
        super().__init__(base_lr, steps_per_epoch)
        self.max_lr, self.total_steps = float(max_lr), int(total_steps)
        self.initial_lr = self.max_lr / div_factor
        self.min_lr = self.initial_lr / final_div_factor
        self.anneal_strategy, self.cycles_momentum = anneal_strategy, bool(cycle_momentum)
        self.base_momentum, self.max_momentum = float(base_momentum), float(max_momentum)
        self.pct_start, self.div_factor, self.final_div_factor = pct_start, div_factor, final_div_factor
        self.three_phase = three_phase
        total = float(total_steps)
        lr_initial, lr_max, lr_min = self.initial_lr, self.max_lr, self.min_lr
        m_base, m_max = self.base_momentum, self.max_momentum
        if three_phase:  # (end step, lr from, lr to, momentum from, momentum to), as torch lists its phases
            self.phases = [(float(pct_start * total) - 1, lr_initial, lr_max, m_max, m_base),
                           (float(2 * pct_start * total) - 2, lr_max, lr_initial, m_base, m_max),
                           (total - 1, lr_initial, lr_min, m_max, m_max)]
        else:
            self.phases = [(float(pct_start * total) - 1, lr_initial, lr_max, m_max, m_base),
                           (total - 1, lr_max, lr_min, m_base, m_max)]

    def _anneal(self, start, end, pct):
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (tf.cos(math.pi * pct) + 1.0)
        return (end - start) * pct + start

    def _value(self, t, momentum):
        """The first phase whose end step t has not passed decides (the last phase beyond it), as in torch."""
        result, start_step = None, 0.0
        for end_step, lr_from, lr_to, m_from, m_to in self.phases:
            start, end = (m_from, m_to) if momentum else (lr_from, lr_to)
            value = self._anneal(start, end, (t - start_step) / (end_step - start_step))
            result = value if result is None else tf.where(t <= start_step, result, value)
            start_step = end_step
        return result

    def lr_at(self, t, base_lr):
        return self._value(tf.minimum(t, float(self.total_steps)), momentum=False)  # torch raises past the end

    def momentum(self, step):
        return self._value(tf.minimum(self.count(step), float(self.total_steps)), momentum=True)

    def get_config(self):
        return {**super().get_config(), "max_lr": self.max_lr, "total_steps": self.total_steps}


# --- section: SequentialLR (needs: schedule-base)


class SequentialLR(TorchSchedule):
    """torch SequentialLR: schedules[i] runs from milestones[i-1] on, its own count restarting at 0 there."""

    def __init__(self, base_lr, schedules, milestones, steps_per_epoch=1):
        super().__init__(base_lr, steps_per_epoch)
        self.schedules, self.milestones = list(schedules), [int(m) for m in milestones]

    def lr_at(self, t, base_lr):
        result = self.schedules[0].lr_at(t, base_lr)
        for milestone, schedule in zip(self.milestones, self.schedules[1:]):
            result = tf.where(t >= milestone, schedule.lr_at(t - milestone, base_lr), result)
        return result


# --- section: LambdaLR (needs: schedule-base)


class LambdaLR(TorchSchedule):
    """torch LambdaLR: base_lr * lr_lambda(t), with lr_lambda written in TensorFlow ops (t is a float32 tensor)."""

    def __init__(self, base_lr, lr_lambda, steps_per_epoch=1):
        super().__init__(base_lr, steps_per_epoch)
        self.lr_lambda = lr_lambda

    def lr_at(self, t, base_lr):
        return base_lr * tf.cast(self.lr_lambda(t), tf.float32)


# --- section: loss-base


class TorchLoss:
    """A torch loss as `loss(y_true, y_pred) -> scalar` (mean as torch reduces it) and `total(y_true, y_pred) ->
    (numerator, denominator)`: the mean is numerator / denominator, and summing both over replicas gives torch's
    mean over the global batch. denominator is None for reduction='sum'."""

    def __init__(self, reduction="mean"):
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"reduction must be 'mean', 'sum' or 'none', not {reduction!r}")
        self.reduction = reduction

    def __call__(self, y_true, y_pred):
        numerator, denominator = self.total(y_true, y_pred)
        return numerator if denominator is None else numerator / denominator

    def reduce(self, values, weights=None):
        values = tf.cast(values, tf.float32)
        numerator = tf.reduce_sum(values)
        if self.reduction == "sum":
            return numerator, None
        if weights is None:
            return numerator, tf.cast(tf.size(values), tf.float32)
        return numerator, tf.reduce_sum(tf.cast(weights, tf.float32))

    def total(self, y_true, y_pred):
        raise NotImplementedError


def _class_last(y_pred, class_axis):
    """Move torch's class axis (1 by default) last; predictions in float32."""
    y_pred = tf.cast(y_pred, tf.float32)
    rank = len(y_pred.shape)
    axis = class_axis % rank
    if axis != rank - 1:
        y_pred = tf.transpose(y_pred, [a for a in range(rank) if a != axis] + [axis])
    return y_pred


# --- section: NLLLoss (needs: loss-base)


class NLLLoss(TorchLoss):
    """torch NLLLoss / F.nll_loss on log-probabilities: -w[y] * logp[y], mean over kept targets weighted by w[y]
    (targets equal to ignore_index are skipped). `class_axis`: where the classes are in y_pred (torch: 1; -1 when
    the source flattens the predictions to (N, C))."""

    log_softmax = False

    def __init__(self, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0, class_axis=1):
        super().__init__(reduction)
        self.weight = None if weight is None else np.asarray(weight, np.float32)
        self.ignore_index, self.label_smoothing, self.class_axis = ignore_index, float(label_smoothing), class_axis

    def total(self, y_true, y_pred):
        logp = _class_last(y_pred, self.class_axis)
        if self.log_softmax:
            logp = tf.nn.log_softmax(logp, axis=-1)
        classes = logp.shape[-1]
        target = tf.cast(y_true, tf.int32)
        keep = tf.not_equal(target, self.ignore_index)
        safe = tf.where(keep, target, 0)
        picked = tf.gather(logp, safe, axis=-1, batch_dims=len(safe.shape))
        weight = tf.constant(self.weight) if self.weight is not None else None
        item_weight = tf.gather(weight, safe) if weight is not None else tf.ones_like(picked)
        item_weight = tf.where(keep, item_weight, 0.0)
        losses = -picked * item_weight
        if self.label_smoothing:
            smooth = -tf.reduce_sum(logp * weight if weight is not None else logp, axis=-1)
            smooth = tf.where(keep, smooth, 0.0)
            losses = (1.0 - self.label_smoothing) * losses + self.label_smoothing / classes * smooth
        if self.reduction == "sum":
            return tf.reduce_sum(losses), None
        return tf.reduce_sum(losses), tf.reduce_sum(item_weight)


# --- section: CrossEntropyLoss (needs: NLLLoss)


class CrossEntropyLoss(NLLLoss):
    """torch CrossEntropyLoss / F.cross_entropy on logits (class indices as targets): log_softmax, then NLL with
    weight, ignore_index and label_smoothing exactly as torch combines them."""

    log_softmax = True


# --- section: BCEWithLogitsLoss (needs: loss-base)


class BCEWithLogitsLoss(TorchLoss):
    """torch BCEWithLogitsLoss: numerically stable, `pos_weight` scales the positive term, `weight` each element."""

    def __init__(self, weight=None, reduction="mean", pos_weight=None):
        super().__init__(reduction)
        self.weight = None if weight is None else np.asarray(weight, np.float32)
        self.pos_weight = None if pos_weight is None else np.asarray(pos_weight, np.float32)

    def total(self, y_true, y_pred):
        x = tf.cast(y_pred, tf.float32)
        y = tf.cast(y_true, tf.float32)
        softplus_neg = tf.math.log1p(tf.exp(-tf.abs(x))) + tf.maximum(-x, 0.0)  # log(1 + exp(-x))
        if self.pos_weight is not None:
            log_weight = 1.0 + (tf.constant(self.pos_weight) - 1.0) * y
            losses = (1.0 - y) * x + log_weight * softplus_neg
        else:
            losses = (1.0 - y) * x + softplus_neg
        if self.weight is not None:
            losses = losses * tf.constant(self.weight)
        return self.reduce(losses)


# --- section: BCELoss (needs: loss-base)


class BCELoss(TorchLoss):
    """torch BCELoss on probabilities; like torch, log terms are clamped at -100."""

    def __init__(self, weight=None, reduction="mean"):
        super().__init__(reduction)
        self.weight = None if weight is None else np.asarray(weight, np.float32)

    def total(self, y_true, y_pred):
        p = tf.cast(y_pred, tf.float32)
        y = tf.cast(y_true, tf.float32)
        losses = -(y * tf.maximum(tf.math.log(p), -100.0) + (1.0 - y) * tf.maximum(tf.math.log(1.0 - p), -100.0))
        if self.weight is not None:
            losses = losses * tf.constant(self.weight)
        return self.reduce(losses)


# --- section: MSELoss (needs: loss-base)


class MSELoss(TorchLoss):
    """torch MSELoss: mean squared error over all elements."""

    def total(self, y_true, y_pred):
        d = tf.cast(y_pred, tf.float32) - tf.cast(y_true, tf.float32)
        return self.reduce(d * d)


# --- section: L1Loss (needs: loss-base)


class L1Loss(TorchLoss):
    """torch L1Loss: mean absolute error over all elements."""

    def total(self, y_true, y_pred):
        return self.reduce(tf.abs(tf.cast(y_pred, tf.float32) - tf.cast(y_true, tf.float32)))


# --- section: SmoothL1Loss (needs: loss-base)


class SmoothL1Loss(TorchLoss):
    """torch SmoothL1Loss(beta): 0.5*d^2/beta below beta, |d| - 0.5*beta above (beta=0 is L1).
    HuberLoss(delta) is delta * SmoothL1Loss(beta=delta); Keras' Huber matches HuberLoss, not SmoothL1Loss."""

    def __init__(self, reduction="mean", beta=1.0, scale=1.0):
        super().__init__(reduction)
        self.beta, self.scale = float(beta), float(scale)

    def total(self, y_true, y_pred):
        d = tf.abs(tf.cast(y_pred, tf.float32) - tf.cast(y_true, tf.float32))
        if self.beta == 0:
            losses = d
        else:
            losses = tf.where(d < self.beta, 0.5 * d * d / self.beta, d - 0.5 * self.beta)
        return self.reduce(losses * self.scale)


def HuberLoss(reduction="mean", delta=1.0):
    """torch HuberLoss(delta) = delta * SmoothL1Loss(beta=delta)."""
    return SmoothL1Loss(reduction=reduction, beta=delta, scale=delta)


# --- section: clipping


def clip_grad_norm(gradients, max_norm, norm_type=2.0):
    """torch.nn.utils.clip_grad_norm_: scale every gradient by min(1, max_norm / (total_norm + 1e-6)), the total
    norm taken over all gradients together (after the all-reduce, as with torch DDP)."""
    norm_type = float(norm_type)
    if math.isinf(norm_type):
        total = tf.reduce_max(tf.stack([tf.reduce_max(tf.abs(g)) for g in gradients]))
    elif norm_type == 2.0:
        total = tf.sqrt(tf.add_n([tf.reduce_sum(tf.square(g)) for g in gradients]))
    else:
        total = tf.pow(tf.add_n([tf.reduce_sum(tf.pow(tf.abs(g), norm_type)) for g in gradients]), 1.0 / norm_type)
    coefficient = tf.minimum(max_norm / (total + 1e-6), 1.0)
    return [g * tf.cast(coefficient, g.dtype) for g in gradients]


def clip_grad_value(gradients, clip_value):
    """torch.nn.utils.clip_grad_value_: clamp every gradient element to [-clip_value, clip_value]."""
    return [tf.clip_by_value(g, -clip_value, clip_value) for g in gradients]


# --- section: tpu-embedding


LARGE_TABLE_ROWS = 10_000  # above this many rows a table is sharded by the TPU embedding API (TFRS's default)


class EmbeddingTable:
    """One Embedding / EmbeddingBag of the model that the TPU embedding API can serve: its torch name, the layer,
    how a bag is combined ("sum", "mean"; None for a plain Embedding: one row per id), and how many times one
    forward looks it up (`lookups`, from a capture run: count_lookups), each lookup a feature of its own."""

    def __init__(self, name, layer, combiner, lookups=1):
        self.name, self.layer, self.combiner, self.lookups = name, layer, combiner, lookups

    @property
    def features(self):
        """The feature names of its lookups, in call order: the torch name, then name/1, name/2, ..."""
        return [self.name] + [f"{self.name}/{k}" for k in range(1, self.lookups)]

    def __repr__(self):
        return f"EmbeddingTable({self.name!r}, {self.layer.num_embeddings}x{self.layer.embedding_dim})"


def tpu_embedding_tables(model, large_rows=LARGE_TABLE_ROWS):
    """(tables for the TPU embedding API, [(torch name, why it stays a dense Keras table)]).

    A table goes to the API when torch marks it sparse (nn.Embedding(sparse=True), F.embedding(..., sparse=True)),
    when it is an nn.EmbeddingBag or an F.embedding_bag table, or when it has more than `large_rows` rows; what the
    API cannot reproduce keeps it dense (replicated, its gradient all-reduced): scale_grad_by_freq, max_norm,
    mode="max" bags, a frozen table, a weight tied to another parameter (the API would update only the lookups'
    share of its gradient), an nn.Parameter looked up by calls with different arguments or with
    per_sample_weights. padding_idx is kept: an Embedding's fed lookups pass no gradient at padding positions, and
    a bag's padding ids are left out of the ids the step enqueues (torch leaves them out of the sum and of the
    mean's count). Layers come first (in module order), then the parameters F.embedding / F.embedding_bag look
    up, as the model's last forward did (functional lookups are found when they run: call the model once first).
    """
    names = {id(variable): name for name, variable in model.named_parameters()}
    keys = {}
    for entry in model.torch_state(""):
        keys[id(entry.variable)] = keys.get(id(entry.variable), 0) + 1
    candidates = [(names.get(id(layer.weight)), layer) for layer in model.modules()
                  if hasattr(layer, "num_embeddings") and hasattr(layer, "embedding_dim")
                  and getattr(layer, "weight", None) is not None and hasattr(layer, "lookup_feed")]
    seen = {id(layer.weight) for _, layer in candidates}  # a layer's weight given to F.embedding: read elsewhere
    for entry in model.torch_state(""):  # a tied parameter once (its first name), a frozen one by its own
        feed = getattr(entry.variable, "lookup_feed", None)
        if feed is not None and feed.lookups and id(entry.variable) not in seen:
            seen.add(id(entry.variable))
            candidates.append((names.get(id(entry.variable), entry.key) if entry.variable.trainable else None,
                               FunctionalTable(entry.variable)))
    tables, dense = [], []
    for name, layer in candidates:
        is_bag = layer.mode is not None if isinstance(layer, FunctionalTable) else hasattr(layer, "mode")
        if not (getattr(layer, "sparse", False) or is_bag or layer.num_embeddings > large_rows):
            continue
        reason = getattr(layer, "unsupported", None)
        if name is None:
            reason = "frozen (not trained)"
        elif keys.get(id(layer.weight), 0) > 1:
            reason = "its weight is tied to another parameter"
        elif reason is None and layer.scale_grad_by_freq:
            reason = "scale_grad_by_freq has no TPU embedding counterpart"
        elif reason is None and getattr(layer, "max_norm", None) is not None:
            reason = "max_norm: torch renormalises the looked-up rows in place, which the TPU embedding API cannot"
        elif reason is None and is_bag and layer.mode not in ("sum", "mean"):
            reason = f"EmbeddingBag(mode={layer.mode!r}): the TPU embedding API combines by sum, mean or sqrtn"
        if reason is not None:
            dense.append((name or layer.name, reason))
            continue
        table_name = name if isinstance(layer, FunctionalTable) else name.removesuffix(".weight")
        tables.append(EmbeddingTable(table_name, layer, layer.mode if is_bag else None))
    return tables, dense


class FunctionalTable:
    """An nn.Parameter the model looks up with F.embedding / F.embedding_bag, seen as the layer an EmbeddingTable
    holds: its variable (`weight`), the lookup feed the runtime keeps on it, and the lookups' arguments (every call
    alike, else `unsupported` says why the API cannot serve it). `mode` is None for F.embedding; `weight` is None
    for a parameter made without its rows (TableBuild)."""

    def __init__(self, variable):
        # a parameter made without its rows (a RowlessTable of TableBuild) has no weight: the API holds the rows
        self.weight = variable if isinstance(variable, (keras.Variable, tf.Variable)) else None
        self.lookup_feed = variable.lookup_feed
        self.name = variable.path
        self.num_embeddings, self.embedding_dim = (int(d) for d in variable.shape)
        self.unsupported = None
        (kind, arguments), *others = variable.lookup_feed.lookups
        arguments = dict(arguments)
        if others:
            self.unsupported = "F.embedding / F.embedding_bag calls look it up with different arguments"
        elif arguments.get("per_sample_weights"):
            self.unsupported = "per_sample_weights are not fed through the TPU embedding API"
        elif not isinstance(arguments["padding_idx"], (int, type(None))):
            self.unsupported = "its padding_idx is computed by the model"
        self.mode = arguments.get("mode") if kind == "embedding_bag" else None
        self.sparse, self.scale_grad_by_freq = arguments["sparse"], arguments["scale_grad_by_freq"]
        self.max_norm = arguments.get("max_norm")
        padding_idx = arguments["padding_idx"]
        self.padding_idx = padding_idx % self.num_embeddings if isinstance(padding_idx, int) else None


def rowless_tables(build):
    """EmbeddingTables of what `build` (a TableBuild, after the model's construction) made without rows: its layers
    without a weight and its parameters that are no variable (RowlessTables), for a CapturedLookups around a forward
    that only needs the shapes (their lookups give zeros)."""
    rowless = [layer for layer in build.layers if layer.weight is None]
    rowless += [parameter for parameter in build.parameters if not isinstance(parameter, keras.Variable)]
    return [EmbeddingTable(f"{i}", item, None) for i, item in enumerate(rowless)]


def served_positions(build, tables):
    """(construction positions of the layers, of the parameters) among `build`'s (the host copy's TableBuild) that
    `tables` serve: the TableBuild arguments of a model built without their rows."""
    served = {id(t.layer) for t in tables if not isinstance(t.layer, FunctionalTable)}
    weights = {id(t.layer.weight) for t in tables if isinstance(t.layer, FunctionalTable)}
    return ([i for i, layer in enumerate(build.layers) if id(layer) in served],
            [i for i, parameter in enumerate(build.parameters) if id(parameter) in weights])


def served_tables(host_tables, host_build, build):
    """The EmbeddingTables of the model built in `build` (a TableBuild given served_positions of `host_tables`,
    after one call of the model), from the host copy's (built in `host_build`): the layers and parameters at the
    same construction positions, which feed the step and hold no rows."""
    tables = []
    for table in host_tables:
        if isinstance(table.layer, FunctionalTable):
            positions = [i for i, p in enumerate(host_build.parameters) if p is table.layer.weight]
            if not positions:
                raise ValueError(f"{table.name}: this parameter was not made in the host copy's TableBuild; keep its "
                                 f"table dense (--tpu-embedding off)")
            layer = FunctionalTable(build.parameters[positions[0]])
        else:
            layer = build.layers[next(i for i, host_layer in enumerate(host_build.layers) if host_layer is table.layer)]
        if (layer.num_embeddings, layer.embedding_dim) != (table.layer.num_embeddings, table.layer.embedding_dim):
            raise ValueError(f"{table.name}: the model and its host copy were built differently")
        tables.append(EmbeddingTable(table.name, layer, table.combiner, table.lookups))
    return tables


def tpu_feature_config(tables):
    """{feature name: FeatureConfig} for `tables` (one feature per lookup, a table's features sharing its
    TableConfig, keyed by EmbeddingTable.features: the first is the torch name), each table initialised like
    torch's (N(0, 1)); load the model's current rows with `load_table_weights`. A bag's combiner is torch's mode."""
    embedding = tf.tpu.experimental.embedding
    config = {}
    for table in tables:
        layer = table.layer
        table_config = embedding.TableConfig(vocabulary_size=layer.num_embeddings, dim=layer.embedding_dim,
                                             initializer=tf.random_normal_initializer(0.0, 1.0),
                                             combiner=table.combiner or "sum", name=table.name.replace(".", "_"))
        for feature in table.features:
            name = feature.replace(".", "_").replace("/", "_")
            config[feature] = embedding.FeatureConfig(table=table_config, name=name)
    return config


def tpu_embedding_optimizer(optimizer):
    """(the tf.tpu.experimental.embedding optimizer that applies torch's update rule to the tables, None) or
    (None, why none does). The learning rate follows the Keras optimizer's (its schedule included).

    torch SGD without momentum: SGD, its coupled L2 weight decay = decoupled decay scaled by the learning rate.
    torch Adam without weight decay and AdamW: Adam with eps outside the square root (sum_inside_sqrt=False) and every
    row's moments decayed each step (lazy_adam=False), AdamW's decay decoupled and scaled by the learning rate.
    torch Adagrad without lr_decay and weight decay: Adagrad from torch's initial accumulator value (eps**2 for
    torch's default 0: the TPU wants it positive, and eps then sits inside the square root, not beside it).
    """
    embedding = tf.tpu.experimental.embedding
    kind = type(optimizer).__name__
    decay = getattr(optimizer, "torch_weight_decay", 0.0) or 0.0

    def learning_rate():
        return optimizer.learning_rate

    decay_args = {"weight_decay_factor": decay, "multiply_weight_decay_factor_by_learning_rate": True} if decay \
        else {}
    if getattr(optimizer, "maximize", False):
        return None, f"{kind}(maximize=True) has no TPU embedding counterpart"
    if kind == "SGD":
        if optimizer.momentum:
            return None, "SGD with momentum: the TPU embedding SGD has no momentum"
        return embedding.SGD(learning_rate=learning_rate, **decay_args), None
    if kind in ("Adam", "AdamW"):
        if optimizer.amsgrad:
            return None, f"{kind}(amsgrad=True) has no TPU embedding counterpart"
        if decay and kind == "Adam":
            return None, "Adam's coupled L2 weight decay (added to the gradient) has no TPU embedding counterpart"
        return embedding.Adam(learning_rate=learning_rate, beta_1=optimizer.beta_1, beta_2=optimizer.beta_2,
                              epsilon=optimizer.epsilon, lazy_adam=False, sum_inside_sqrt=False, **decay_args), None
    if kind == "Adagrad":
        if optimizer.lr_decay or decay:
            return None, "Adagrad with lr_decay or weight decay has no TPU embedding counterpart"
        # the TPU accumulator must start positive: torch's 0 becomes eps**2, so that sqrt(sum) starts at torch's eps
        initial = optimizer.initial_accumulator_value or optimizer.epsilon ** 2
        return embedding.Adagrad(learning_rate=learning_rate, initial_accumulator_value=initial), None
    return None, f"torch's {kind} has no TPU embedding counterpart (SGD, Adam, AdamW and Adagrad have)"


def tpu_embedding_class(strategy):
    """TPUEmbeddingV2 on SparseCore chips (v5p, v6e), TPUEmbedding on other TPUs, None off TPU, as the strategy's
    hardware feature says."""
    extended = getattr(strategy, "extended", None)
    hardware = getattr(extended, "tpu_hardware_feature", None)
    if hardware is None:
        return None
    feature = hardware.embedding_feature
    kinds = tf.tpu.experimental.HardwareFeature.EmbeddingFeature
    if feature == kinds.V2:
        return tf.tpu.experimental.embedding.TPUEmbeddingV2
    if feature == kinds.V1:
        return tf.tpu.experimental.embedding.TPUEmbedding
    return None


def tpu_embedding_features(tables, ids, on_tpu=False):
    """{feature name: feature} from each lookup's ids as the model passes them (`lookup_ids`).

    A bag's ids become a RaggedTensor, one row per bag, so that the API combines them by torch's mode; its padding
    ids are left out (torch leaves them out of the sum and of the mean's count; an empty bag gives zeros in both).
    An Embedding's ids stay as they are; on a TPU (`on_tpu`) ids of rank 2 and above get a trailing axis of 1,
    which the API reduces (one row per id), where TPUEmbeddingForServing looks up every id as it is.
    """
    features = {}
    for table in tables:
        for name in table.features:
            features[name] = _lookup_feature(table, ids[name], on_tpu)
    return features


def _lookup_feature(table, value, on_tpu):
    if not isinstance(value, tf.RaggedTensor):
        value = tf.convert_to_tensor(value)
    padding_idx = table.layer.padding_idx
    if table.combiner:
        if not isinstance(value, tf.RaggedTensor):
            value = tf.RaggedTensor.from_tensor(value)
        if padding_idx is not None:
            value = tf.ragged.boolean_mask(value, tf.not_equal(value, tf.cast(padding_idx, value.dtype)))
    elif on_tpu and len(value.shape) > 1:
        value = tf.expand_dims(value, -1)
    return value


class CapturedLookups:
    """`with CapturedLookups(tables) as ids:` the model called inside records the ids its own code looks up in
    each table ({feature name: ids}, filled on exit; see EmbeddingTable.features) and reads none of the tables;
    see lookup_ids. `counts` ({torch name: lookups}) says how many times each table was looked up, `unsupported`
    ({torch name: why}) which calls cannot be fed."""

    def __init__(self, tables):
        self.tables, self.ids, self.counts, self.unsupported = tables, {}, {}, {}

    def __enter__(self):
        for table in self.tables:
            feed = table.layer.lookup_feed
            feed.mode, feed.calls, feed.unsupported = "capture", [], None
        return self.ids

    def __exit__(self, *exc_info):
        for table in self.tables:
            feed = table.layer.lookup_feed
            calls, feed.mode, feed.calls = feed.calls, None, []
            if feed.unsupported:
                self.unsupported[table.name] = feed.unsupported
            self.counts[table.name] = len(calls)
            names = [table.name] + [f"{table.name}/{k}" for k in range(1, len(calls))]
            self.ids.update(zip(names, calls))


class FedLookups:
    """`with FedLookups(tables, activations):` the model called inside takes each table's lookup from
    `activations` ({feature name: (batch..., dim) float32}, what the TPU embedding API dequeued, one per lookup in
    call order) instead of reading its own weight; everything else runs as usual. The loss' gradient w.r.t.
    `activations` is the tables' gradient as the API's apply_gradients takes it."""

    def __init__(self, tables, activations):
        self.tables, self.activations = tables, activations

    def __enter__(self):
        for table in self.tables:
            table.layer.lookup_feed.mode = "feed"
            table.layer.lookup_feed.activations = [self.activations[name] for name in table.features]
        return self

    def __exit__(self, *exc_info):
        for table in self.tables:
            feed = table.layer.lookup_feed
            unused, feed.mode, feed.activations = feed.activations, None, []
            if exc_info[0] is None and unused:
                raise ValueError(f"{table.name}: the model did not look up the activations fed for it")

    def check_unread(self, variables, gradients):
        """Raise when the loss reaches a fed table's own weight (gradients: one per variable, None where the loss
        does not reach it): the model reads it outside its lookups (a tied output layer), which the TPU embedding
        API would never see."""
        fed = {id(table.layer.weight): table.name for table in self.tables if table.layer.weight is not None}
        read = [fed[id(v)] for v, g in zip(variables, gradients) if g is not None and id(v) in fed]
        if read:
            raise ValueError(f"{', '.join(read)}: the model reads the table outside its lookups; keep it dense")


def lookup_ids(model, tables, inputs):
    """{feature name: ids} that `model` looks up in each table for `inputs` (a tuple of model inputs): a capture
    run, in which the tables return zeros unread and the traced graph drops what the ids do not need. The ids must
    not depend on the model's float computations (a lookup of an argmax): those tables stay dense."""
    capture = CapturedLookups(tables)
    with capture:
        model(*inputs, training=False)
    misfits = [f"{t.name} ({capture.counts[t.name]}, not {t.lookups})" for t in tables
               if capture.counts[t.name] != t.lookups]
    if misfits:
        raise ValueError(f"lookups per forward changed: {', '.join(misfits)}; count_lookups sets them")
    return capture.ids


def count_lookups(model, tables, inputs):
    """Set each table's `lookups` to how many times `model` looks it up for `inputs` (a capture run); returns
    [(torch name, why it stays dense)] for the tables it does not look up at all (no feature to enqueue) or looks up
    in a way the API is not fed (per_sample_weights)."""
    capture = CapturedLookups(tables)
    with capture:
        model(*inputs, training=False)
    for table in tables:
        table.lookups = max(capture.counts[table.name], 1)
    unused = [(t.name, "not looked up by the model's forward") for t in tables if not capture.counts[t.name]]
    return unused + sorted(capture.unsupported.items())


def tables_read_elsewhere(model, tables, inputs):
    """Names of `tables` whose weight `model` also reads outside its lookups (an output layer that uses the table
    by hand, `h @ emb.weight.T`): a fed trial forward on `inputs` in which such a weight still gets a gradient.
    Those tables stay dense: the TPU embedding API would see only the lookups' share of their gradient."""
    features = tpu_embedding_features(tables, lookup_ids(model, tables, inputs))
    activations = {name: host_lookup(t, t.layer.weight, features[name]) for t in tables for name in t.features}
    with tf.GradientTape() as tape:
        with FedLookups(tables, activations):
            outputs = model(*inputs, training=False)
        total = tf.add_n([tf.reduce_sum(tf.cast(o, tf.float32)) for o in tf.nest.flatten(outputs)])
    gradients = tape.gradient(total, [t.layer.weight for t in tables])
    return [t.name for t, g in zip(tables, gradients) if g is not None]


def host_lookup(table, weight, feature):
    """What the TPU embedding API returns for `feature` (tpu_embedding_features, on_tpu=False) of `table` with the
    rows `weight`: one row per id, or each bag's rows combined by its mode (an empty bag: zeros). The CPU
    counterpart of dequeue, checked against TPUEmbeddingForServing.embedding_lookup."""
    rows = tf.gather(tf.convert_to_tensor(weight), feature)
    if not table.combiner:
        return rows
    total = tf.reduce_sum(rows, axis=1)
    if table.combiner == "sum":
        return total
    count = tf.cast(tf.expand_dims(feature.row_lengths(), -1), total.dtype)
    return total / tf.maximum(count, 1.0)


class HostTableEmbedding:
    """A CPU stand-in for TPUEmbedding with its enqueue / dequeue / apply_gradients protocol, serving `tables`
    from the model's own weights: dequeue looks the enqueued ids up as the API does (host_lookup), apply_gradients
    carries the activations' gradients back to the rows (scatter-add through the combiner, the API's backward) and
    steps them with `optimizer`, a torch-rule optimizer of the tables' own (the API's tables have their own slots
    and step count). It runs the training step's substitution on a host; the TPU's own optimizer kernels (the
    mapping of tpu_embedding_optimizer) are what only a TPU runs."""

    def __init__(self, tables, optimizer):
        self.tables, self.optimizer, self.features = tables, optimizer, None
        self.variables = [table.layer.weight for table in tables]
        optimizer.build(self.variables)

    def enqueue(self, features, training=True):
        self.features = features

    def dequeue(self):
        features = {name: _this_replica(feature) for name, feature in self.features.items()}
        return {name: host_lookup(table, table.layer.weight, features[name])
                for table in self.tables for name in table.features}

    def apply_gradients(self, gradients):
        with tf.GradientTape() as tape:
            activations = self.dequeue()
        names = [name for table in self.tables for name in table.features]  # a table's lookups add up
        targets = [activations[name] for name in names]
        output_gradients = [tf.zeros_like(activations[name]) if gradients[name] is None else gradients[name]
                            for name in names]  # a lookup the loss does not reach: no change, as on a TPU
        table_gradients = [tf.convert_to_tensor(g) for g in
                           tape.gradient(targets, self.variables, output_gradients=output_gradients)]
        context = tf.distribute.get_replica_context()
        if context is None or context.num_replicas_in_sync == 1:
            self.optimizer.apply(table_gradients, self.variables)
            return
        # several replicas: the gradients summed over them (as the API sums them row by row), the tables (one copy,
        # on the host) stepped once
        table_gradients = context.all_reduce(tf.distribute.ReduceOp.SUM, table_gradients)
        context.merge_call(self._apply_once, args=tuple(table_gradients))

    def _apply_once(self, strategy, *gradients):
        # in the cross-replica context Keras' apply would merge_call again (there is no replica to merge from): its
        # update rule, step by step, for the host's one copy of the tables
        optimizer, learning_rate = self.optimizer, self.optimizer.learning_rate
        for gradient, variable in zip(gradients, self.variables):
            optimizer.update_step(strategy.experimental_local_results(gradient)[0], variable, learning_rate)
        optimizer.iterations.assign_add(1)


def _this_replica(value):
    """The running replica's part of `value` (what the host enqueued: one part per replica under a strategy with
    several), or `value` itself."""
    context = tf.distribute.get_replica_context()
    if context is None or not isinstance(value, tf.distribute.DistributedValues):
        return value
    index = tf.get_static_value(context.replica_id_in_sync_group)
    return tf.distribute.get_strategy().experimental_local_results(value)[index]


def load_table_weights(embedding, tables, feature_config):
    """Copy each table's rows from the model's layer into `embedding` (TPUEmbeddingForServing on a host; on a TPU
    the tables load from a checkpoint written here)."""
    variables = embedding.embedding_tables
    for table in tables:
        variables[feature_config[table.name].table].assign(tf.cast(table.layer.weight, tf.float32))


def load_model_tables(model_tables, embedding, feature_config):
    """Copy each table's rows from `embedding` (TPUEmbeddingForServing, restored on a host from a checkpoint of
    the TPU run) into the model's layers: the model's own copies are stale after training on a TPU."""
    variables = embedding.embedding_tables
    for table in model_tables:
        table.layer.weight.assign(tf.cast(variables[feature_config[table.name].table], table.layer.weight.dtype))


def _served_weights(tables):
    """ids of the variables of `tables` (in the host copy): a model built in TableBuild has none of them."""
    return {id(t.layer.weight) for t in tables}


def model_weights(host_model, host_tables):
    """`host_model`'s weights (numpy, in order) for the model built without the rows of `host_tables`
    (TableBuild): theirs left out."""
    served = _served_weights(host_tables)
    return [np.asarray(w) for w in host_model.weights if id(w) not in served]


def export_weights(model, host_model, host_tables):
    """The full model's weights (in `host_model`'s order) after training: the served tables' trained rows from
    `host_model` (the host copy), everything else from `model` (built without the tables)."""
    served = _served_weights(host_tables)
    own = iter(model.get_weights())
    return [np.asarray(variable) if id(variable) in served else next(own) for variable in host_model.weights]
