# YaRN rotary embeddings as an inference library builds them: the inverse frequencies are made on
# the GPU with device="cuda" (the meta device stands in for it here), and they are blended
# between interpolation and extrapolation with a linear ramp mask that a module-level helper
# builds. The cos/sin cache is computed once, when the rotary embedding is constructed.
import math

import torch
import torch.nn as nn

torch.manual_seed(0)
CUDA = "meta"  # "cuda"


def _yarn_find_correction_dim(num_rotations, dim, base=10000, max_position_embeddings=2048):
    return (dim * math.log(max_position_embeddings / (num_rotations * 2 * math.pi))) / (2 * math.log(base))


def _yarn_find_correction_range(low_rot, high_rot, dim, base=10000, max_position_embeddings=2048):
    low = math.floor(_yarn_find_correction_dim(low_rot, dim, base, max_position_embeddings))
    high = math.ceil(_yarn_find_correction_dim(high_rot, dim, base, max_position_embeddings))
    return max(low, 0), min(high, dim - 1)


def _yarn_linear_ramp_mask(low: float, high: float, dim: int, dtype: torch.dtype,
                           device=CUDA) -> torch.Tensor:
    if low == high:
        high += 0.001  # prevent a division by zero
    linear_func = (torch.arange(dim, dtype=dtype, device=device) - low) / (high - low)
    ramp_func = torch.clamp(linear_func, 0, 1)
    return ramp_func


def _yarn_get_mscale(scale: float = 1) -> float:
    if scale <= 1:
        return 1.0
    return 0.1 * math.log(scale) + 1.0


class YaRNScalingRotaryEmbedding(nn.Module):
    def __init__(self, head_size, rotary_dim, max_position_embeddings, base, scaling_factor,
                 extrapolation_factor=1, attn_factor=1, beta_fast=32, beta_slow=1):
        super().__init__()
        self.head_size = head_size
        self.rotary_dim = rotary_dim
        self.max_position_embeddings = max_position_embeddings
        self.base = base
        self.scaling_factor = scaling_factor
        self.extrapolation_factor = extrapolation_factor
        self.attn_factor = attn_factor
        self.beta_fast = beta_fast
        self.beta_slow = beta_slow
        self.mscale = float(_yarn_get_mscale(self.scaling_factor) * attn_factor)
        cache = self._compute_cos_sin_cache()
        self.register_buffer("cos_sin_cache", cache, persistent=False)

    def _compute_inv_freq(self, scaling_factor: float) -> torch.Tensor:
        pos_freqs = self.base ** (
            torch.arange(0, self.rotary_dim, 2, dtype=torch.float, device=CUDA) / self.rotary_dim)
        inv_freq_extrapolation = 1.0 / pos_freqs
        inv_freq_interpolation = 1.0 / (scaling_factor * pos_freqs)
        low, high = _yarn_find_correction_range(self.beta_fast, self.beta_slow, self.rotary_dim, self.base,
                                                self.max_position_embeddings)
        inv_freq_mask = (1 - _yarn_linear_ramp_mask(low, high, self.rotary_dim // 2,
                                                    dtype=torch.float, device=CUDA)) * self.extrapolation_factor
        inv_freq = inv_freq_interpolation * (1 - inv_freq_mask) + inv_freq_extrapolation * inv_freq_mask
        return inv_freq

    def _compute_cos_sin_cache(self) -> torch.Tensor:
        inv_freq = self._compute_inv_freq(self.scaling_factor)
        t = torch.arange(self.max_position_embeddings * self.scaling_factor, device=CUDA, dtype=torch.float32)
        freqs = torch.einsum("i,j -> ij", t, inv_freq)
        cos = freqs.cos() * self.mscale
        sin = freqs.sin() * self.mscale
        return torch.cat((cos, sin), dim=-1)


rope = YaRNScalingRotaryEmbedding(head_size=64, rotary_dim=64, max_position_embeddings=256, base=10000,
                                  scaling_factor=4.0)
print(tuple(rope.cos_sin_cache.shape), rope.cos_sin_cache.device.type)
