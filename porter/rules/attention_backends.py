"""Rules: the contexts that pick which CUDA kernel torch's scaled_dot_product_attention runs
(`with torch.nn.attention.sdpa_kernel(backends):`, the older `torch.backends.cuda.sdp_kernel(**config)`:
denoising-diffusion-pytorch's Attend). They change how attention is computed on a GPU, never what: in the port, a
context that does nothing (runtime/autocast.py `attention_backend`), its arguments (torch backends) not carried.

Layout "source": the arguments are Python values.
"""

from porter.ir.values import python
from porter.rules.registry import function_rule


def translate_backend_choice(ctx, call):
    return python(f"{ctx.runtime('attention_backend')}()")


function_rule("torch.nn.attention.sdpa_kernel", "torch.backends.cuda.sdp_kernel",
              translate=translate_backend_choice, layout="source", outputs="python")
