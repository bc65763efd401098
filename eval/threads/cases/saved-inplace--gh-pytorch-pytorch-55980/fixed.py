# A model that rescales the channels at one spatial position of one feature map by a vector
# computed from a second input, writing the product back into that slice.
import torch

torch.manual_seed(0)


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(12, 12, 3)

    def forward(self, x, y):
        x = self.conv(x)
        y = self.conv(y)
        var = y.flatten()
        x[0, :, 0, 0] = x[0, :, 0, 0].clone() * var

        loss = torch.mean(x)
        var.register_hook(lambda grad: print('var grad', grad.sum().item()))
        return loss


model = Model()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.ones([1, 12, 3, 3]).float()
y = torch.ones([1, 12, 3, 3]).float()

for step in range(2):
    optimizer.zero_grad()
    loss = model(x, y)
    loss.backward()
    optimizer.step()
    print(step, loss.item())
