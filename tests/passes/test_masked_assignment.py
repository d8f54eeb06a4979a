"""`z[z < 0] = 0` on an image held channels-last: the mask is computed where the image lies, so the assignment is a
`tf.where` on the image as held. Before, the image went to torch's order for the scatter while its mask stayed
channels-last ("boolean index did not match indexed array" at run time); a tensor index of a scatter in torch's
order is now brought to that order too (`z[m] += 1`). In-place channel and row assignments keep the layout. Odd
sizes and batch 1 drawn by hypothesis; eager and XLA."""

from tests.rules.common_op_cases import op_family_tests

OPS = {
    "scalar_mask": "z = y.clone()\n        z[z < 0] = 0\n        y = z",
    "mask_of_another": "z = y.clone()\n        m = y.mean(1, keepdim=True).expand_as(y) > 0.1\n        z[m] = -1.5\n"
                       "        y = z",
    "mask_then_channels": "z = y.clone()\n        z[z > 0.5] = 0.5\n        z[:, :2] = z[:, :2] * 2\n"
                          "        z[:, :, 0] = y[:, :, -1]\n        y = z",
    "aug_mask": "z = y.clone()\n        z[z > 0] += 1.0\n        y = z",
}

ported, test_masked_assignment_matches_torch = op_family_tests(OPS)


def test_scalar_mask_is_a_where_as_held(ported):
    import inspect

    code = inspect.getsource(ported("scalar_mask").keras_module.OpModel.call)
    assert "tf.where(" in code and "to_channels_first" not in code, code
