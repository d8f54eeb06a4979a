"""Rules: Dropout family and functional dropout (identity in inference; keras.random + SeedGenerator in training).

Note for the translator: F.dropout* default training=True while F.alpha_dropout / F.feature_alpha_dropout default
training=False (torch's own defaults); the training parameter is filled with the model's training flag.
"""

from porter.rules.registry import KEEPS_CHANNELS, function_rule, module_rule

module_rule("torch.nn.Dropout", runtime="Dropout", layout="any", training=True)
module_rule("torch.nn.AlphaDropout", runtime="AlphaDropout", layout="any", training=True)
# Channel-wise: drop whole channels; the noise is (N, 1, ..., 1, C) on channels-last tensors.
module_rule("torch.nn.Dropout1d", runtime="Dropout1d", layout="channels_last", training=True, channels=KEEPS_CHANNELS)
module_rule("torch.nn.Dropout2d", runtime="Dropout2d", layout="channels_last", training=True, channels=KEEPS_CHANNELS)
module_rule("torch.nn.Dropout3d", runtime="Dropout3d", layout="channels_last", training=True, channels=KEEPS_CHANNELS)
module_rule("torch.nn.FeatureAlphaDropout", runtime="FeatureAlphaDropout", layout="channels_last", training=True,
            channels=KEEPS_CHANNELS)

F = "torch.nn.functional."
_SIGNATURE = "(input, p=0.5, training=True, inplace=False)"
function_rule(F + "dropout", runtime="dropout", signature=_SIGNATURE, layout="any", training_param="training",
              same_rank=True, keeps_channels=True)
for _rank, _name in ((3, "dropout1d"), (4, "dropout2d"), (5, "dropout3d")):
    function_rule(F + _name, runtime=_name, signature=_SIGNATURE, layout="channels_last", training_param="training",
                  keeps_channels=True)
function_rule(F + "alpha_dropout", runtime="alpha_dropout", signature="(input, p=0.5, training=False, inplace=False)",
              layout="any", training_param="training")
function_rule(F + "feature_alpha_dropout", runtime="feature_alpha_dropout",
              signature="(input, p=0.5, training=False, inplace=False)", layout="channels_last",
              training_param="training", keeps_channels=True)
