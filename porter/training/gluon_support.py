"""MXNet Gluon training semantics on Keras 3 / TensorFlow: Trainer optimizers, mx.lr_scheduler schedules, Gluon
losses. Sections of this file are copied into the generated train_support.py beside train_support.py's own (the
`# --- section:` markers work the same way; `needs:` may name train_support.py's sections).

- Optimizers follow mxnet 1.9.1's update kernels: the gradient reaching `apply` is the batch mean (Gluon's
  `trainer.step(batch_size)` divides the summed gradient by the batch size), times `rescale_grad`; `clip_gradient`
  clamps it element-wise; `wd` is coupled L2 added to it (also for Adam and RMSProp); SGD momentum is mxnet's
  lr-scaled `mom = momentum*mom - lr*g; w += mom`; Adam folds the bias corrections into the learning rate
  (`lr * sqrt(1-b2^t)/(1-b1^t)`, epsilon outside the square root and not bias-corrected); RMSProp adds epsilon
  inside the square root.
- Schedules are mxnet's LRScheduler objects as a function of the optimizer step: mxnet asks the scheduler for
  `num_update` = the number of updates including the current one, so step 0 here is mxnet's num_update 1.
- Losses return per-sample losses averaged over the non-batch axes, then `(sum over samples, samples)`, so the
  train step's mean is the mean over the global batch, as `loss.backward(); trainer.step(batch_size)` takes it.
"""

import math

import tensorflow as tf

from porter.training.train_support import TorchLoss, TorchOptimizer, TorchSchedule

# --- section: gluon-optimizer-base (needs: optimizer-base)


class GluonOptimizer(TorchOptimizer):
    """Base of the mxnet-rule optimizers: `rescale_grad` (Trainer's optimizer_params; the batch-size division is
    the train step's mean), element-wise `clip_gradient` and coupled `wd`. Parameters' lr_mult / wd_mult (1 unless
    the source sets them, e.g. `net.collect_params('.*bias').setattr('wd_mult', 0)`) come as parameter groups:
    `param_groups=[{"wd_mult": 0.0}, ...]` and `group_of(name, shape) -> index`."""

    clip_before_decay = True  # SGD and NAG clip the rescaled gradient, then add wd * weight; Adam/RMSProp clip both
    # mxnet's fused kernels (sgd, nag, signum, adam, rmsprop, ftml, lamb) get clip_gradient only when it is truthy
    # and skip a negative one; the optimizers mxnet updates in Python (adagrad, adadelta, adamax, nadam, sgld) clip
    # whenever it is not None, so clip_gradient=0 zeroes their gradient and leaves the kernels' alone
    kernel_clip = True

    lr_mult = 1.0  # Parameter.lr_mult / wd_mult: per-parameter-group overrides (param_groups, group_of)
    wd_mult = 1.0

    def __init__(self, learning_rate, wd=0.0, rescale_grad=1.0, clip_gradient=None, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.torch_weight_decay = wd
        self.rescale_grad = rescale_grad
        self.clip_gradient = clip_gradient

    def rate(self, variable, learning_rate):
        """The learning rate of `variable`: the schedule's times its parameter's lr_mult."""
        lr = tf.cast(learning_rate, variable.dtype)
        multiplier = self.hyper(variable, "lr_mult")
        return lr * multiplier if multiplier != 1.0 else lr

    def decay(self, variable):
        """wd times the parameter's wd_mult (a Python number)."""
        return self.torch_weight_decay * self.hyper(variable, "wd_mult")

    def clip(self, g):
        """g clamped to [-clip_gradient, clip_gradient] where this optimizer's mxnet update clips (kernel_clip)."""
        clip = self.clip_gradient
        if clip is None or (self.kernel_clip and not (clip and clip >= 0)):
            return g
        return tf.clip_by_value(g, -clip, clip)

    def rescaled(self, gradient, variable):
        g = tf.cast(tf.convert_to_tensor(gradient), variable.dtype)
        return g * self.rescale_grad if self.rescale_grad != 1.0 else g

    def clipped(self, gradient, variable):
        """clip(rescale_grad * g), without weight decay (the optimizers that apply wd on their own)."""
        return self.clip(self.rescaled(gradient, variable))

    def gluon_gradient(self, gradient, variable):
        """mxnet's gradient: rescale_grad * g, clipped, plus wd * weight (clipped after it: clip_before_decay)."""
        g = self.rescaled(gradient, variable)
        if self.clip_before_decay:
            g = self.clip(g)
        decay = self.decay(variable)
        if decay:
            g = g + decay * variable
        return g if self.clip_before_decay else self.clip(g)

    def get_config(self):
        config = super().get_config()
        config.update({"wd": self.torch_weight_decay, "rescale_grad": self.rescale_grad,
                       "clip_gradient": self.clip_gradient})
        return config


# --- section: GluonSGD (needs: gluon-optimizer-base)


class GluonSGD(GluonOptimizer):
    """mxnet 'sgd': `w -= lr * g` without momentum; with it `mom = momentum*mom - lr*g; w += mom` (the buffer holds
    lr-scaled steps, so a schedule changes the trajectory as in mxnet, not as in torch)."""

    def __init__(self, learning_rate=0.01, momentum=0.0, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.momentum = momentum

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._moments = self.slots(var_list, "momentum") if self.momentum else []

    def update_step(self, gradient, variable, learning_rate):
        lr = self.rate(variable, learning_rate)
        g = self.gluon_gradient(gradient, variable)
        if not self.momentum:
            self.assign_sub(variable, lr * g)
            return
        mom = self._moments[self._get_variable_index(variable)]
        updated = self.momentum * mom - lr * g
        self.assign(mom, updated)
        self.assign_add(variable, updated)

    def get_config(self):
        return {**super().get_config(), "momentum": self.momentum}


# --- section: GluonNAG (needs: gluon-optimizer-base)


class GluonNAG(GluonOptimizer):
    """mxnet 'nag' (nag_mom_update, lr-scaled buffer): `m1 = momentum*mom; w' = w - m1 + (momentum+1)*(m1 - lr*(c +
    wd*w)); mom = m1 - lr*(c + wd*w')` with c = clip(rescale_grad*grad). The buffer's weight-decay term reads the
    updated weight, as mxnet's in-place kernel (out=weight) does; plain SGD without momentum."""

    def __init__(self, learning_rate=0.01, momentum=0.0, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.momentum = momentum

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._moments = self.slots(var_list, "momentum") if self.momentum else []

    def update_step(self, gradient, variable, learning_rate):
        lr = self.rate(variable, learning_rate)
        if not self.momentum:
            self.assign_sub(variable, lr * self.gluon_gradient(gradient, variable))
            return
        g = self.clipped(gradient, variable)
        wd = self.decay(variable)
        mom = self._moments[self._get_variable_index(variable)]
        scaled = self.momentum * mom
        weight = variable + 0.0
        updated = weight - scaled + (self.momentum + 1.0) * (scaled - lr * (g + wd * weight))
        self.assign(mom, scaled - lr * (g + wd * updated))
        self.assign(variable, updated)

    def get_config(self):
        return {**super().get_config(), "momentum": self.momentum}


# --- section: gluon-adam-base (needs: gluon-optimizer-base)


class GluonAdamBase(GluonOptimizer):
    """What mxnet's Adam, Adamax, Nadam and LAMB share: beta1, beta2, a first-moment slot `mean` and a second one
    (`second_slot`), the update count t and float64 bias corrections `1 - beta^t` (mxnet computes them in Python or
    in double before the float32 kernel). g = clip(rescale_grad*grad + wd*w): the clip follows the decay."""

    clip_before_decay = False
    second_slot = "var"

    def __init__(self, learning_rate, beta1=0.9, beta2=0.999, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.beta1, self.beta2 = beta1, beta2

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._mean = self.slots(var_list, "mean")
        self._second = self.slots(var_list, self.second_slot)

    def moment_slots(self, variable):
        index = self._get_variable_index(variable)
        return self._mean[index], self._second[index]

    def kernel_moments(self, g, variable):
        """`m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g^2` as the fused kernels compute them (float32 betas, so
        1 - beta rounds as there); updates the slots and returns (m, v)."""
        mean, var = self.moment_slots(variable)
        beta1, beta2 = tf.constant(self.beta1, variable.dtype), tf.constant(self.beta2, variable.dtype)
        new_mean = beta1 * mean + (1.0 - beta1) * g
        new_var = beta2 * var + (1.0 - beta2) * g * g
        self.assign(mean, new_mean)
        self.assign(var, new_var)
        return new_mean, new_var

    def update_count(self):
        """t: the number of updates including this one (mxnet's _index_update_count), as a float64."""
        return tf.cast(self._iterations + 1, tf.float64)

    def bias_correction(self, beta, t):
        return 1.0 - tf.pow(tf.constant(beta, tf.float64), t)

    def corrected_rate(self, variable, learning_rate, factor):
        """lr * lr_mult * factor (a float64 bias correction) in float64, then in the variable's dtype."""
        return tf.cast(tf.cast(learning_rate, tf.float64) * self.hyper(variable, "lr_mult") * factor, variable.dtype)

    def get_config(self):
        return {**super().get_config(), "beta1": self.beta1, "beta2": self.beta2}


# --- section: GluonAdam (needs: gluon-adam-base)


class GluonAdam(GluonAdamBase):
    """mxnet 'adam': `m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g^2; w -= lr*sqrt(1-b2^t)/(1-b1^t) * m/(sqrt(v)+eps)`
    with g = clip(rescale_grad*grad + wd*w): coupled L2 (not AdamW), epsilon not bias-corrected (torch's Adam
    divides it by sqrt(1-b2^t) in effect)."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, **kwargs):
        super().__init__(learning_rate, beta1, beta2, **kwargs)
        self.epsilon = epsilon

    def update_step(self, gradient, variable, learning_rate):
        g = self.gluon_gradient(gradient, variable)
        t = self.update_count()
        lr = self.corrected_rate(variable, learning_rate,
                                 tf.sqrt(self.bias_correction(self.beta2, t)) / self.bias_correction(self.beta1, t))
        new_mean, new_var = self.kernel_moments(g, variable)
        self.assign_sub(variable, lr * new_mean / (tf.sqrt(new_var) + self.epsilon))

    def get_config(self):
        return {**super().get_config(), "epsilon": self.epsilon}


# --- section: GluonAdamax (needs: gluon-adam-base)


class GluonAdamax(GluonAdamBase):
    """mxnet 'adamax': g = clip(rescale_grad*grad + wd*w); `m = b1*m + (1-b1)*g; u = max(b2*u, |g|);
    w -= lr/(1-b1^t) * m/u` (no epsilon)."""

    kernel_clip = False
    second_slot = "norm"

    def __init__(self, learning_rate=0.002, beta1=0.9, beta2=0.999, **kwargs):
        super().__init__(learning_rate, beta1, beta2, **kwargs)

    def update_step(self, gradient, variable, learning_rate):
        g = self.gluon_gradient(gradient, variable)
        lr = self.corrected_rate(variable, learning_rate, 1.0 / self.bias_correction(self.beta1, self.update_count()))
        mean, norm = self.moment_slots(variable)
        # Python-float betas: mxnet's Python update scales by (1. - beta1) computed in double
        new_mean = self.beta1 * mean + (1.0 - self.beta1) * g
        new_norm = tf.maximum(self.beta2 * norm, tf.abs(g))
        self.assign(mean, new_mean)
        self.assign(norm, new_norm)
        self.assign_sub(variable, lr * new_mean / new_norm)


# --- section: GluonNadam (needs: gluon-adam-base)


class GluonNadam(GluonAdamBase):
    """mxnet 'nadam': g = clip(rescale_grad*grad + wd*w); a warming momentum schedule `mu_t = b1*(1 -
    0.5*0.96^(t*schedule_decay))` whose running product m_schedule mxnet keeps once per optimizer and advances at
    every parameter's update, in gluon.Trainer's order (parameters sorted by name): the k-th of N parameters at
    step t reads m_schedule = (mu_1...mu_{t-1})^N * mu_t^(k+1), computed so here (names from bind(); the order
    is exact where mxnet's prefixed names sort as the state_dict names do, e.g. bias before weight in a layer).
    `w -= lr * m_bar / (sqrt(v_hat) + eps)`, m_bar = (1-mu_t)*g/(1-m_schedule) + mu_{t+1}*m/(1-m_schedule*
    mu_{t+1}), v_hat = v/(1-b2^t)."""

    kernel_clip = False

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, schedule_decay=0.004,
                 **kwargs):
        super().__init__(learning_rate, beta1, beta2, **kwargs)
        self.epsilon, self.schedule_decay = epsilon, schedule_decay

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        names = [self._names.get(self._var_key(variable)) for variable in var_list]
        order = sorted(range(len(var_list)), key=lambda i: names[i]) if all(names) else range(len(var_list))
        self._rank = {index: rank for rank, index in enumerate(order)}
        self._count = len(var_list)
        self._product = tf.Variable(1.0, dtype=tf.float64, trainable=False, name="m_schedule_product")
        self._product_step = tf.Variable(0, dtype=tf.int64, trainable=False, name="m_schedule_step")

    def _momentum_at(self, t):
        return self.beta1 * (1.0 - 0.5 * tf.pow(tf.constant(0.96, tf.float64), t * self.schedule_decay))

    def update_step(self, gradient, variable, learning_rate):
        dtype = variable.dtype
        g = self.gluon_gradient(gradient, variable)
        step = tf.cast(self._iterations, tf.int64) + 1
        t = tf.cast(step, tf.float64)
        # (mu_1...mu_{t-1})^N, advanced by the first parameter updated in a step
        advanced = self._product * tf.where(t > 1.0, tf.pow(self._momentum_at(t - 1.0), float(self._count)),
                                            tf.constant(1.0, tf.float64))
        product = tf.where(self._product_step < step, advanced, self._product)
        self._product.assign(product)
        self._product_step.assign(step)
        momentum_t, momentum_next = self._momentum_at(t), self._momentum_at(t + 1.0)
        m_schedule = product * tf.pow(momentum_t, float(self._rank[self._get_variable_index(variable)] + 1))
        m_schedule_next = m_schedule * momentum_next
        mean, var = self.moment_slots(variable)
        new_mean = self.beta1 * mean + (1.0 - self.beta1) * g
        new_var = self.beta2 * var + (1.0 - self.beta2) * g * g
        self.assign(mean, new_mean)
        self.assign(var, new_var)
        g_prime = g / tf.cast(1.0 - m_schedule, dtype)
        m_prime = new_mean / tf.cast(1.0 - m_schedule_next, dtype)
        v_prime = new_var / tf.cast(self.bias_correction(self.beta2, t), dtype)
        m_bar = tf.cast(1.0 - momentum_t, dtype) * g_prime + tf.cast(momentum_next, dtype) * m_prime
        self.assign_sub(variable, self.rate(variable, learning_rate) * m_bar / (tf.sqrt(v_prime) + self.epsilon))

    def get_config(self):
        return {**super().get_config(), "epsilon": self.epsilon, "schedule_decay": self.schedule_decay}


# --- section: GluonLAMB (needs: gluon-adam-base)


class GluonLAMB(GluonAdamBase):
    """mxnet 'lamb' (multi_lamb_update, which gluon.Trainer's aggregated updates use): c = clip(rescale_grad*grad);
    Adam's moments of c; `g = m_hat/(sqrt(v_hat) + eps) + wd*w` (m_hat = m/(1-b1^t), v_hat = v/(1-b2^t) with
    bias_correction, else m and v); a per-tensor trust ratio r1/r2, r1 = ||w|| clamped to [lower_bound,
    upper_bound] (each only when truthy and >= 0, as mxnet passes them), r2 = ||g||, 1 where either is 0;
    `w -= lr * ratio * g`."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-6, lower_bound=None,
                 upper_bound=None, bias_correction=True, **kwargs):
        super().__init__(learning_rate, beta1, beta2, **kwargs)
        self.epsilon, self.lower_bound, self.upper_bound = epsilon, lower_bound, upper_bound
        self.corrects_bias = bias_correction

    def update_step(self, gradient, variable, learning_rate):
        dtype = variable.dtype
        new_mean, new_var = self.kernel_moments(self.clipped(gradient, variable), variable)
        if self.corrects_bias:
            t = tf.cast(self._iterations + 1, dtype)  # the kernel's float32 powers of the float32 betas
            new_mean = new_mean / (1.0 - tf.pow(tf.constant(self.beta1, dtype), t))
            new_var = new_var / (1.0 - tf.pow(tf.constant(self.beta2, dtype), t))
        g = new_mean / (tf.sqrt(new_var) + self.epsilon) + self.decay(variable) * variable
        r1 = tf.norm(variable)
        if self.lower_bound and self.lower_bound >= 0:
            r1 = tf.maximum(r1, self.lower_bound)
        if self.upper_bound and self.upper_bound >= 0:
            r1 = tf.minimum(r1, self.upper_bound)
        r2 = tf.norm(g)
        ratio = tf.where((r1 == 0.0) | (r2 == 0.0), tf.ones_like(r1), r1 / tf.where(r2 == 0.0, tf.ones_like(r2), r2))
        self.assign_sub(variable, self.rate(variable, learning_rate) * ratio * g)

    def get_config(self):
        return {**super().get_config(), "epsilon": self.epsilon, "lower_bound": self.lower_bound,
                "upper_bound": self.upper_bound, "bias_correction": self.corrects_bias}


# --- section: GluonSignum (needs: gluon-optimizer-base)


class GluonSignum(GluonOptimizer):
    """mxnet 'signum' (momentum > 0): c = clip(rescale_grad*grad); `mom = momentum*mom - (1-momentum)*(wd*w + c);
    w = (1 - lr*wd_lh)*w + lr*sign(mom)`; momentum 0 is signSGD: `w = (1 - lr*wd)*w - lr*sign(c)`."""

    def __init__(self, learning_rate=0.01, momentum=0.9, wd_lh=0.0, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.momentum, self.wd_lh = momentum, wd_lh

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        if self.momentum > 0:
            self._momentum = self.slots(var_list, "momentum")

    def update_step(self, gradient, variable, learning_rate):
        lr = self.rate(variable, learning_rate)
        c = self.clipped(gradient, variable)
        decay = self.decay(variable)
        if self.momentum <= 0:
            self.assign(variable, (1.0 - lr * decay) * variable - lr * tf.sign(c))
            return
        mom = self._momentum[self._get_variable_index(variable)]
        new_mom = self.momentum * mom - (1.0 - self.momentum) * (decay * variable + c)
        self.assign(mom, new_mom)
        self.assign(variable, (1.0 - lr * self.wd_lh) * variable + lr * tf.sign(new_mom))

    def get_config(self):
        return {**super().get_config(), "momentum": self.momentum, "wd_lh": self.wd_lh}


# --- section: GluonFTML (needs: gluon-optimizer-base)


class GluonFTML(GluonOptimizer):
    """mxnet 'ftml' (ftml_update, float32): g = clip(rescale_grad*grad + wd*w); `v = b2*v + (1-b2)*g^2;
    d_t = (1-b1^t)/lr * (sqrt(v/(1-b2^t)) + eps); z = b1*z + (1-b1)*g - (d_t - b1*d)*w; d = d_t; w = -z/d_t`.
    The learning rate divides, so a schedule changes d_t itself (as in mxnet)."""

    clip_before_decay = False

    def __init__(self, learning_rate=0.01, beta1=0.6, beta2=0.999, epsilon=1e-8, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._d = self.slots(var_list, "d")
        self._v = self.slots(var_list, "v")
        self._z = self.slots(var_list, "z")

    def update_step(self, gradient, variable, learning_rate):
        dtype = variable.dtype
        g = self.gluon_gradient(gradient, variable)
        index = self._get_variable_index(variable)
        d, v, z = self._d[index], self._v[index], self._z[index]
        t = tf.cast(self._iterations + 1, dtype)
        beta1, beta2 = tf.constant(self.beta1, dtype), tf.constant(self.beta2, dtype)  # the kernel's float32 betas
        new_v = beta2 * v + (1.0 - beta2) * g * g
        d_t = (1.0 - tf.pow(beta1, t)) / self.rate(variable, learning_rate) * (
            tf.sqrt(new_v / (1.0 - tf.pow(beta2, t))) + self.epsilon)
        new_z = beta1 * z + (1.0 - beta1) * g - (d_t - beta1 * d) * variable
        self.assign(v, new_v)
        self.assign(z, new_z)
        self.assign(d, d_t)
        self.assign(variable, -new_z / d_t)

    def get_config(self):
        return {**super().get_config(), "beta1": self.beta1, "beta2": self.beta2, "epsilon": self.epsilon}


# --- section: GluonSGLD (needs: gluon-optimizer-base)


class GluonSGLD(GluonOptimizer):
    """mxnet 'sgld' (Langevin dynamics): c = clip(rescale_grad*grad); `w -= lr/2 * (c + wd*w); w += N(0, lr)`
    (standard deviation sqrt(lr)). mxnet draws the noise from its global generator; here it is a stateless draw
    keyed by (seed + parameter index, step), so every replica adds the same noise to its copy of a mirrored
    variable and a run repeats with its seed. The noise's distribution is mxnet's; its values are not."""

    kernel_clip = False

    def __init__(self, learning_rate=0.01, seed=0, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.seed = int(seed)

    def noise(self, variable, stddev):
        """N(0, stddev^2) shaped like `variable`, the same on every replica for a given step and parameter."""
        key = tf.stack([tf.constant(self.seed, tf.int64) + self._get_variable_index(variable),
                        tf.cast(self._iterations, tf.int64)])
        return tf.random.stateless_normal(tf.shape(variable), key, dtype=variable.dtype) * stddev

    def update_step(self, gradient, variable, learning_rate):
        lr = self.rate(variable, learning_rate)
        c = self.clipped(gradient, variable)
        drifted = variable - lr / 2.0 * (c + self.decay(variable) * variable)
        self.assign(variable, drifted + self.noise(variable, tf.sqrt(lr)))

    def get_config(self):
        return {**super().get_config(), "seed": self.seed}


# --- section: GluonRMSProp (needs: gluon-optimizer-base)


class GluonRMSProp(GluonOptimizer):
    """mxnet 'rmsprop': `n = (1-gamma1)*g^2 + gamma1*n; w -= lr * g / sqrt(n + eps)` (epsilon inside the square
    root); centered (Graves): also `gbar = (1-gamma1)*g + gamma1*gbar`, `delta = gamma2*delta - lr*g/sqrt(n -
    gbar^2 + eps)`, `w += delta`. clip_weights clamps the weights after the update."""

    clip_before_decay = False

    def __init__(self, learning_rate=0.001, gamma1=0.9, gamma2=0.9, epsilon=1e-8, centered=False,
                 clip_weights=None, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.gamma1, self.gamma2, self.epsilon = gamma1, gamma2, epsilon
        self.centered, self.clip_weights = centered, clip_weights

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._n = self.slots(var_list, "n")
        self._g = self.slots(var_list, "g") if self.centered else []
        self._delta = self.slots(var_list, "delta") if self.centered else []

    def update_step(self, gradient, variable, learning_rate):
        lr = self.rate(variable, learning_rate)
        g = self.gluon_gradient(gradient, variable)
        index = self._get_variable_index(variable)
        gamma1 = tf.constant(self.gamma1, variable.dtype)  # the kernel's float32 gamma1: 1 - gamma1 rounds as there
        n = self._n[index]
        new_n = (1.0 - gamma1) * g * g + gamma1 * n
        self.assign(n, new_n)
        if self.centered:
            gbar, delta = self._g[index], self._delta[index]
            new_gbar = (1.0 - gamma1) * g + gamma1 * gbar
            self.assign(gbar, new_gbar)
            new_delta = self.gamma2 * delta - lr * g / tf.sqrt(new_n - new_gbar * new_gbar + self.epsilon)
            self.assign(delta, new_delta)
            updated = variable + new_delta
        else:
            updated = variable - lr * g / tf.sqrt(new_n + self.epsilon)
        if self.clip_weights:
            updated = tf.clip_by_value(updated, -self.clip_weights, self.clip_weights)
        self.assign(variable, updated)

    def get_config(self):
        return {**super().get_config(), "gamma1": self.gamma1, "gamma2": self.gamma2, "epsilon": self.epsilon,
                "centered": self.centered, "clip_weights": self.clip_weights}


# --- section: GluonAdaGrad (needs: gluon-optimizer-base)


class GluonAdaGrad(GluonOptimizer):
    """mxnet 'adagrad' (dense path): c = clip(rescale_grad*grad); `history += c^2; w -= lr * (c / sqrt(history + eps)
    + wd * w)`: epsilon inside the square root, weight decay outside the adaptive scaling."""

    kernel_clip = False

    def __init__(self, learning_rate=0.01, eps=1e-7, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.eps = eps

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self._history = self.slots(var_list, "history")

    def update_step(self, gradient, variable, learning_rate):
        lr = self.rate(variable, learning_rate)
        g = self.clipped(gradient, variable)
        history = self._history[self._get_variable_index(variable)]
        new_history = history + g * g
        self.assign(history, new_history)
        self.assign_sub(variable, (g / tf.sqrt(new_history + self.eps) + self.decay(variable) * variable) * lr)

    def get_config(self):
        return {**super().get_config(), "eps": self.eps}


# --- section: GluonAdaDelta (needs: GluonAdaGrad)


class GluonAdaDelta(GluonAdaGrad):
    """mxnet 'adadelta' (no learning rate): c = clip(rescale_grad*grad); `acc_g = rho*acc_g + (1-rho)*c^2;
    delta = sqrt(acc_delta + eps) / sqrt(acc_g + eps) * c; acc_delta = rho*acc_delta + (1-rho)*delta^2;
    w -= delta + wd * w`."""

    def __init__(self, learning_rate=0.01, rho=0.9, epsilon=1e-5, **kwargs):
        super().__init__(learning_rate, **kwargs)
        self.rho, self.epsilon = rho, epsilon

    def build(self, var_list):
        if self.built:
            return
        GluonOptimizer.build(self, var_list)
        self._acc_g = self.slots(var_list, "acc_g")
        self._acc_delta = self.slots(var_list, "acc_delta")

    def update_step(self, gradient, variable, learning_rate):
        g = self.clipped(gradient, variable)
        index = self._get_variable_index(variable)
        acc_g, acc_delta = self._acc_g[index], self._acc_delta[index]
        new_acc_g = self.rho * acc_g + (1.0 - self.rho) * g * g
        self.assign(acc_g, new_acc_g)
        delta = tf.sqrt(acc_delta + self.epsilon) / tf.sqrt(new_acc_g + self.epsilon) * g
        self.assign(acc_delta, self.rho * acc_delta + (1.0 - self.rho) * delta * delta)
        self.assign_sub(variable, delta + self.decay(variable) * variable)

    def get_config(self):
        return {**super().get_config(), "rho": self.rho, "epsilon": self.epsilon}


# --- section: gluon-schedule-base (needs: schedule-base)


class GluonSchedule(TorchSchedule):
    """An mx.lr_scheduler.LRScheduler as a function of the optimizer step. `base_lr` is the scheduler's base_lr
    once the optimizer has set it (the Trainer's learning_rate when given); `initial_lr` is the base_lr the
    scheduler was built with, which mxnet keeps for the warm-up's end (and for Poly/Cosine's start).
    Warm-up: for num_update < warmup_steps, linear from warmup_begin_lr to initial_lr, or constant
    warmup_begin_lr."""

    def __init__(self, base_lr, initial_lr=None, warmup_steps=0, warmup_begin_lr=0.0, warmup_mode="linear"):
        super().__init__(base_lr, 1)
        self.initial_lr = float(base_lr if initial_lr is None else initial_lr)
        self.warmup_steps, self.warmup_begin_lr = int(warmup_steps), float(warmup_begin_lr)
        self.warmup_mode = warmup_mode

    def __call__(self, step):
        n = tf.cast(step, tf.float32) + 1.0  # mxnet's num_update counts the update being made
        lr = self.lr_at(n, self.base_lr)
        if self.warmup_steps > 0:
            if self.warmup_mode == "linear":
                warm = self.warmup_begin_lr + (self.initial_lr - self.warmup_begin_lr) * n / self.warmup_steps
            else:
                warm = self.warmup_begin_lr + 0.0 * n
            lr = tf.where(n < self.warmup_steps, warm, lr)
        return lr

    def lr_for_base(self, step, base_lr):
        return self(step)

    def get_config(self):
        return {"base_lr": self.base_lr, "initial_lr": self.initial_lr, "warmup_steps": self.warmup_steps,
                "warmup_begin_lr": self.warmup_begin_lr, "warmup_mode": self.warmup_mode}


# --- section: FactorScheduler (needs: gluon-schedule-base)


class FactorScheduler(GluonSchedule):
    """mx.lr_scheduler.FactorScheduler: base_lr * factor ** (ceil(num_update / step) - 1), not below
    stop_factor_lr."""

    def __init__(self, base_lr, step, factor=1.0, stop_factor_lr=1e-8, **kwargs):
        super().__init__(base_lr, **kwargs)
        self.step, self.factor, self.stop_factor_lr = int(step), float(factor), float(stop_factor_lr)

    def lr_at(self, n, base_lr):
        decays = tf.maximum(tf.math.ceil(n / self.step) - 1.0, 0.0)
        return tf.maximum(base_lr * tf.pow(self.factor, decays), self.stop_factor_lr)


# --- section: MultiFactorScheduler (needs: gluon-schedule-base)


class MultiFactorScheduler(GluonSchedule):
    """mx.lr_scheduler.MultiFactorScheduler: base_lr * factor ** (number of steps s with num_update > s)."""

    def __init__(self, base_lr, step, factor=1.0, **kwargs):
        super().__init__(base_lr, **kwargs)
        self.step, self.factor = [int(s) for s in step], float(factor)

    def lr_at(self, n, base_lr):
        passed = tf.add_n([tf.cast(n > s, tf.float32) for s in self.step]) if self.step else 0.0 * n
        return base_lr * tf.pow(self.factor, passed)


# --- section: PolyScheduler (needs: gluon-schedule-base)


class PolyScheduler(GluonSchedule):
    """mx.lr_scheduler.PolyScheduler: final_lr + (initial_lr - final_lr) * (1 - (n - warmup) / (max_update -
    warmup)) ** pwr up to max_update, then final_lr. Like mxnet, it starts from the scheduler's own base_lr."""

    def __init__(self, base_lr, max_update, pwr=2, final_lr=0.0, **kwargs):
        super().__init__(base_lr, **kwargs)
        self.max_update, self.pwr, self.final_lr = int(max_update), float(pwr), float(final_lr)

    def lr_at(self, n, base_lr):
        progress = (tf.minimum(n, float(self.max_update)) - self.warmup_steps) / (self.max_update - self.warmup_steps)
        return self.final_lr + (self.initial_lr - self.final_lr) * tf.pow(1.0 - progress, self.pwr)


# --- section: CosineScheduler (needs: gluon-schedule-base)


class CosineScheduler(GluonSchedule):
    """mx.lr_scheduler.CosineScheduler: final_lr + (initial_lr - final_lr) * (1 + cos(pi * (n - warmup) /
    (max_update - warmup))) / 2 up to max_update, then final_lr. Like mxnet, it starts from the scheduler's own
    base_lr."""

    def __init__(self, base_lr, max_update, final_lr=0.0, **kwargs):
        super().__init__(base_lr, **kwargs)
        self.max_update, self.final_lr = int(max_update), float(final_lr)

    def lr_at(self, n, base_lr):
        progress = (tf.minimum(n, float(self.max_update)) - self.warmup_steps) / (self.max_update - self.warmup_steps)
        return self.final_lr + (self.initial_lr - self.final_lr) * (1.0 + tf.cos(math.pi * progress)) / 2.0


# --- section: gluon-loss-base (needs: loss-base)


class GluonLoss(TorchLoss):
    """A gluon.loss.Loss: element losses times `weight`, averaged over every axis but the batch axis (0); the
    train step's value is the mean of these per-sample losses over the global batch (reduction="mean": the source
    divides the summed gradient by the batch size in trainer.step) or their sum (reduction="sum")."""

    def __init__(self, weight=None, reduction="mean"):
        super().__init__(reduction)
        self.weight = weight

    def elements(self, y_true, y_pred):
        raise NotImplementedError

    def total(self, y_true, y_pred):
        losses = tf.cast(self.elements(y_true, y_pred), tf.float32)
        if self.weight is not None:
            losses = losses * float(self.weight)
        if len(losses.shape) > 1:
            losses = tf.reduce_mean(losses, axis=list(range(1, len(losses.shape))))
        return self.reduce(losses)


def _like(label, pred):
    """Gluon's reshape_like(label, pred): the label in pred's shape, float32."""
    return tf.reshape(tf.cast(label, tf.float32), tf.shape(pred))


# --- section: SoftmaxCrossEntropyLoss (needs: gluon-loss-base)


class SoftmaxCrossEntropyLoss(GluonLoss):
    """gluon.loss.SoftmaxCrossEntropyLoss: log_softmax over `class_axis` (Gluon's `axis`, default -1) unless
    from_logits; sparse_label picks the label's class, else -sum(label * log p) over the axis (integer class
    labels of lower rank are one-hot encoded first)."""

    def __init__(self, class_axis=-1, sparse_label=True, from_logits=False, weight=None, reduction="mean"):
        super().__init__(weight, reduction)
        self.class_axis, self.sparse_label, self.from_logits = class_axis, sparse_label, from_logits

    def elements(self, y_true, y_pred):
        pred = tf.cast(y_pred, tf.float32)
        axis = self.class_axis % len(pred.shape)
        logp = pred if self.from_logits else tf.nn.log_softmax(pred, axis=axis)
        if self.sparse_label or len(y_true.shape) < len(pred.shape):
            label = tf.cast(y_true, tf.int32)
            if len(label.shape) == len(pred.shape):
                label = tf.squeeze(label, axis)
            onehot = tf.one_hot(label, pred.shape[axis], axis=axis, dtype=tf.float32)
        else:
            onehot = _like(y_true, pred)
        return -tf.reduce_sum(logp * onehot, axis=axis)


# --- section: L2Loss (needs: gluon-loss-base)


class L2Loss(GluonLoss):
    """gluon.loss.L2Loss: weight / 2 * (label - pred)^2 (Gluon's weight defaults to 1)."""

    def __init__(self, weight=1.0, reduction="mean"):
        super().__init__(1.0 if weight is None else weight, reduction)

    def elements(self, y_true, y_pred):
        pred = tf.cast(y_pred, tf.float32)
        return 0.5 * tf.square(_like(y_true, pred) - pred)


# --- section: GluonL1Loss (needs: gluon-loss-base)


class GluonL1Loss(GluonLoss):
    """gluon.loss.L1Loss: weight * |label - pred|."""

    def elements(self, y_true, y_pred):
        pred = tf.cast(y_pred, tf.float32)
        return tf.abs(_like(y_true, pred) - pred)


# --- section: SigmoidBinaryCrossEntropyLoss (needs: gluon-loss-base)


class SigmoidBinaryCrossEntropyLoss(GluonLoss):
    """gluon.loss.SigmoidBinaryCrossEntropyLoss (SigmoidBCELoss): on logits relu(x) - x*y + softrelu(-|x|); with
    from_sigmoid on probabilities -(y*log(p + 1e-12) + (1-y)*log(1 - p + 1e-12))."""

    def __init__(self, from_sigmoid=False, weight=None, reduction="mean"):
        super().__init__(weight, reduction)
        self.from_sigmoid = from_sigmoid

    def elements(self, y_true, y_pred):
        pred = tf.cast(y_pred, tf.float32)
        label = _like(y_true, pred)
        if not self.from_sigmoid:
            return tf.nn.relu(pred) - pred * label + tf.math.softplus(-tf.abs(pred))
        eps = 1e-12
        return -(tf.math.log(pred + eps) * label + tf.math.log(1.0 - pred + eps) * (1.0 - label))


# --- section: GluonHuberLoss (needs: gluon-loss-base)


class GluonHuberLoss(GluonLoss):
    """gluon.loss.HuberLoss(rho): 0.5/rho * d^2 where |d| <= rho, |d| - 0.5*rho elsewhere (d = label - pred)."""

    def __init__(self, rho=1.0, weight=None, reduction="mean"):
        super().__init__(weight, reduction)
        self.rho = float(rho)

    def elements(self, y_true, y_pred):
        pred = tf.cast(y_pred, tf.float32)
        d = tf.abs(_like(y_true, pred) - pred)
        return tf.where(d > self.rho, d - 0.5 * self.rho, (0.5 / self.rho) * tf.square(d))


# --- section: clip_global_norm


def clip_global_norm(gradients, max_norm, scale=1.0):
    """gluon.utils.clip_global_norm(grads, max_norm) between backward() and trainer.step(): every gradient times
    min(1, max_norm / (norm + 1e-8)), the norm over all gradients together. The source clips the gradients before
    trainer.step divides them by the batch size; these arrive divided, so `scale` (that batch size) brings their
    norm back to the source's."""
    total = tf.sqrt(tf.add_n([tf.reduce_sum(tf.square(tf.cast(g, tf.float32))) for g in gradients])) * scale
    coefficient = tf.minimum(max_norm / (total + 1e-8), 1.0)
    return [g * tf.cast(coefficient, g.dtype) for g in gradients]
