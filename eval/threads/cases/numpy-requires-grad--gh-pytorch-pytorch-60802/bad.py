# The tensor-expression benchmark suite: a benchmark builds its inputs through a tensor engine
# (so the same benchmark can run on several frameworks), runs forward (and backward when the
# mode is "both"), and checks the result against a NumPy reference computed from the same
# inputs converted through the engine.
import numpy as np
import torch

torch.manual_seed(0)


class TorchTensorEngine:
    def rand(self, shape, device=None, dtype=None, requires_grad=False):
        return torch.rand(shape, device=device, dtype=dtype, requires_grad=requires_grad)

    def numpy(self, t):
        return t.cpu().numpy()

    def backward(self, tensors, grad_tensors, _):
        torch.autograd.backward(tensors, grad_tensors=grad_tensors)


class Benchmark:
    def __init__(self, mode, device, dtype):
        self.mode = mode
        self.deterministic = False
        self.device = device
        self.dtype = dtype
        self.engine = TorchTensorEngine()
        self.requires_grad = mode == "both"

    def rand(self, shape, device=None, dtype=None, requires_grad=False):
        return self.engine.rand(shape, device=device, dtype=dtype, requires_grad=requires_grad)

    def numpy(self, t):
        return self.engine.numpy(t)

    def compute(self):
        return self.forward(*self.inputs)

    def check(self):
        np.testing.assert_allclose(self.reference(), self.numpy(self.compute()), atol=1e-2)

    def run(self):
        self.check()
        result = self.compute()
        if self.mode == "both":
            self.engine.backward([result], [torch.ones_like(result)], None)
        return result


class ElementMulBench(Benchmark):
    def __init__(self, mode, device, dtype, N):
        super().__init__(mode, device, dtype)
        self.N = N
        self.d1 = self.rand([N], device=device, dtype=dtype, requires_grad=self.requires_grad)
        self.d2 = self.rand([N], device=device, dtype=dtype, requires_grad=self.requires_grad)
        self.inputs = [self.d1, self.d2]

    def forward(self, d1, d2):
        return d1 * d2 + d1

    def reference(self):
        d1, d2 = [self.numpy(d) for d in [self.d1, self.d2]]
        return d1 * d2 + d1


for mode in ["fwd", "both"]:
    bench = ElementMulBench(mode, "cpu", torch.float32, 1 << 10)
    out = bench.run()
    print(mode, out.shape)
