"""Rule: torch's named constants (dtypes, `torch.pi`, `torch.inf`, ...) and what the port writes for them, wherever
they appear: in translated code and in code carried over as written (defaults such as `dtype=torch.float32`)."""

TORCH_CONSTANTS = {
    "torch.float32": "tf.float32", "torch.float": "tf.float32", "torch.float64": "tf.float64",
    "torch.double": "tf.float64", "torch.float16": "tf.float16", "torch.half": "tf.float16",
    "torch.bfloat16": "tf.bfloat16", "torch.int64": "tf.int64", "torch.long": "tf.int64", "torch.int32": "tf.int32",
    "torch.int": "tf.int32", "torch.bool": "tf.bool", "torch.uint8": "tf.uint8", "torch.int8": "tf.int8",
    "torch.int16": "tf.int16", "torch.complex64": "tf.complex64", "torch.cfloat": "tf.complex64",
    "math.pi": "math.pi", "math.e": "math.e", "math.inf": "math.inf", "torch.inf": "math.inf", "torch.pi": "math.pi",
    "torch.nan": "math.nan", "math.nan": "math.nan",
    # the version whose semantics the port follows (performer's `LooseVersion(torch.__version__) >= ...` feature
    # checks: the string "torch.__version__" compared as a version raised)
    "torch.__version__": "'2.13.0'",
    # mxnet's automatic mixed precision (float16 on GPUs; GluonNLP picks a smaller mask value under it): the port
    # runs mixed precision through Keras policies (bfloat16 on TPU, fp32's range), never through mxnet's AMP
    "mxnet.contrib.amp.amp._amp_initialized": "False", "mxnet.contrib.amp._amp_initialized": "False",
    # `F` itself and mxnet's two APIs as values (`elif F == mx.nd:` runs shape checks imperatively only): the port
    # runs `F` as the imperative NDArray API, so the comparison says so
    **{f"mxnet.{space}.{name}": f"tf.{name.rstrip('_')}" for space in ("np", "numpy") for name in (
        "float16", "float32", "float64", "int8", "int32", "int64", "uint8", "bool_")},  # mxnet.np's dtypes
    "mxnet.np.pi": "math.pi", "mxnet.np.e": "math.e", "mxnet.np.inf": "math.inf", "mxnet.np.nan": "math.nan",
    "mxnet.ndarray": "'ndarray'", "mxnet.nd": "'ndarray'", "mxnet.symbol": "'symbol'", "mxnet.sym": "'symbol'",
}

# Calls that ask the host about torch's devices: the port has no device objects (TensorFlow places ops itself, and
# tf.distribute on TPU), so device values are None and CUDA/MPS are never available.
TORCH_HOST_CALLS = {
    "torch.device": "None", "torch.cuda.is_available": "False", "torch.cuda.device_count": "0",
    "torch.backends.mps.is_available": "False", "torch.backends.cudnn.is_available": "False",
    "torch.cuda.current_device": "None", "torch.get_default_device": "None",
    # torch's default floating dtype is float32 unless a script sets it (`set_default_dtype` is not ported), as
    # Keras's floatx is; mixed precision runs through Keras policies
    "torch.get_default_dtype": "tf.float32",
    # mxnet's numpy-mode switches (`F.npx.activation if is_np_array() else F.Activation`): Gluon code is ported as
    # the classic NDArray API it also supports
    "mxnet.util.is_np_array": "False", "mxnet.util.is_np_shape": "False", "mxnet.is_np_array": "False",
    # mxnet's contexts (`ctx=cpu()` defaults of GluonCV's constructors and factories): no device objects either
    "mxnet.cpu": "None", "mxnet.gpu": "None", "mxnet.context.cpu": "None", "mxnet.context.gpu": "None",
    "mxnet.current_context": "None", "mxnet.context.current_context": "None", "mxnet.context.num_gpus": "0",
    "mxnet.num_gpus": "0",
}

# framework classes code carried over as written may derive from or name, and what stands for them in the port:
# Gluon's Block as any layer; classes porter has no port of as a base that raises when built
CARRIED_CLASSES = {"mxnet.gluon.Parameter": "NotTranslatedBase",
                   "mxnet.gluon.parameter.Parameter": "NotTranslatedBase",
                   "mxnet.gluon.Block": "AnyLayer", "mxnet.gluon.HybridBlock": "AnyLayer",
                   "mxnet.gluon.block.Block": "AnyLayer", "mxnet.gluon.block.HybridBlock": "AnyLayer"}

# what `isinstance(x, ...)` asks when it asks whether x is a tensor (Gluon's `isinstance(states, ndarray.NDArray)`):
# the port's tensor classes (the runtime's `TensorClasses`)
TENSOR_CLASS_NAMES = ("torch.Tensor", "torch.nn.Parameter", "mxnet.ndarray.NDArray", "mxnet.ndarray.ndarray.NDArray",
                      "mxnet.gluon.Parameter")

# torch's base classes of its layers, as model code names them in `isinstance` (timm's efficientvim.py:
# `isinstance(self.norm, nn.modules.batchnorm._BatchNorm)`): the layers deriving from them, whose ports the runtime
# has (the port tests against a tuple of those classes)
_BATCH_NORMS = tuple(f"torch.nn.{n}" for n in ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm",
                                                "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d"))
_INSTANCE_NORMS = tuple(f"torch.nn.InstanceNorm{d}d" for d in (1, 2, 3))
_CONV_TRANSPOSES = tuple(f"torch.nn.ConvTranspose{d}d" for d in (1, 2, 3))
TORCH_BASE_CLASSES = {
    "torch.nn._BatchNorm": _BATCH_NORMS,
    "torch.nn._InstanceNorm": _INSTANCE_NORMS,
    "torch.nn._NormBase": _BATCH_NORMS + _INSTANCE_NORMS,
    "torch.nn._ConvNd": tuple(f"torch.nn.{k}{d}d" for k in ("Conv", "LazyConv") for d in (1, 2, 3)) + _CONV_TRANSPOSES,
    "torch.nn._ConvTransposeNd": _CONV_TRANSPOSES,
    "torch.nn._MaxPoolNd": tuple(f"torch.nn.MaxPool{d}d" for d in (1, 2, 3)),
    "torch.nn._AvgPoolNd": tuple(f"torch.nn.AvgPool{d}d" for d in (1, 2, 3)),
    "torch.nn._AdaptiveAvgPoolNd": tuple(f"torch.nn.AdaptiveAvgPool{d}d" for d in (1, 2, 3)),
    "torch.nn._AdaptiveMaxPoolNd": tuple(f"torch.nn.AdaptiveMaxPool{d}d" for d in (1, 2, 3)),
    "torch.nn._LPPoolNd": tuple(f"torch.nn.LPPool{d}d" for d in (1, 2, 3)),
    "torch.nn._DropoutNd": tuple(f"torch.nn.{n}" for n in ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d",
                                                          "AlphaDropout", "FeatureAlphaDropout")),
    "torch.nn.RNNBase": ("torch.nn.RNN", "torch.nn.LSTM", "torch.nn.GRU"),
    "torch.nn.RNNCellBase": ("torch.nn.RNNCell", "torch.nn.LSTMCell", "torch.nn.GRUCell"),
}
