# A module keeps four random buffers: each is registered with register_buffer and also kept in a
# Python list, self.params, which forward walks to weight its input. The module is moved to the
# GPU with .cuda() (the meta device stands in for it here).
import torch
import torch.nn as nn

torch.manual_seed(0)
device = torch.device("meta")


class MyModule(nn.Module):
    def __init__(self):

        super(MyModule, self).__init__()

        params = [torch.rand(1, 3) for i in range(4)]
        self.params = []
        for i, param in enumerate(params):
            self.register_buffer('param_{}'.format(i), param)
            self.params.append(getattr(self, 'param_{}'.format(i)))

    def forward(self, x):
        out = x
        for param in self.params:
            out = out * param
        return out.sum(1)


a = MyModule()
print(a.state_dict().keys())
print(len(a.params))

a.to(device)
print({k: v.device.type for k, v in a.state_dict().items()})
y = a(torch.rand(5, 3).to(device))
print(y.shape, y.device.type)
