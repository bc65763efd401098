# torch-mlir examples/eager_mode.py: torch tensors are wrapped in a TorchMLIRTensor, whose
# constructor hands the tensor to the eager backend; the reference backend keeps a numpy copy of
# the data on its "device". The example's inputs require grad.
import numpy as np
import torch

torch.manual_seed(0)


class RefBackend:
    def transfer_from_torch_to_device(self, tensor: torch.Tensor):
        return tensor.detach().numpy()

    def transfer_from_device_to_torch(self, array):
        return torch.from_numpy(array)

    def add(self, a, b):
        return np.add(a, b)


backend = RefBackend()


class TorchMLIRTensor:
    def __init__(self, elem):
        self.elem = backend.transfer_from_torch_to_device(elem)
        self.requires_grad = elem.requires_grad

    def __add__(self, other):
        out = TorchMLIRTensor.__new__(TorchMLIRTensor)
        out.elem = backend.add(self.elem, other.elem)
        out.requires_grad = self.requires_grad or other.requires_grad
        return out

    def to_torch(self):
        return backend.transfer_from_device_to_torch(self.elem)


torch_a = torch.randn(5, requires_grad=True)
torch_b = torch.randn(5, requires_grad=True)
torch_c = torch_a + torch_b

a = TorchMLIRTensor(torch_a)
b = TorchMLIRTensor(torch_b)
c = a + b

print(torch.allclose(c.to_torch(), torch_c.detach()))
