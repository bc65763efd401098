# A model-explanation library's PyTorch deep explainer: __init__ runs the background data through the
# model for the expected value, gradient() differentiates one output w.r.t. the inputs tiled against the
# background, and shap_values() turns gradient * (input - background) into numpy attributions.
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


class PyTorchDeepExplainer:
    def __init__(self, model, data):
        self.multi_input = type(data) == list
        if type(data) != list:
            data = [data]
        self.data = data
        self.model = model.eval()
        self.multi_output = False
        self.num_outputs = 1
        with torch.no_grad():
            outputs = model(*data)
            self.device = outputs.device
            if outputs.shape[1] > 1:
                self.multi_output = True
                self.num_outputs = outputs.shape[1]
            self.expected_value = outputs.mean(0).cpu().numpy()

    def gradient(self, idx, inputs):
        self.model.zero_grad()
        X = [x.requires_grad_() for x in inputs]
        outputs = self.model(*X)
        selected = [val for val in outputs[:, idx]]
        grads = []
        for idx, x in enumerate(X):
            grad = torch.autograd.grad(selected, x, retain_graph=True if idx + 1 < len(X) else None, allow_unused=True)[0]
            grads.append(grad.cpu().numpy() if grad is not None else torch.zeros_like(X[idx]).cpu().numpy())
        return grads

    def shap_values(self, X):
        if not self.multi_input:
            X = [X]

        X = [x.to(self.device) for x in X]

        model_output_ranks = torch.ones((X[0].shape[0], self.num_outputs)).int() * torch.arange(0, self.num_outputs).int()
        output_phis = []
        for i in range(model_output_ranks.shape[1]):
            phis = [np.zeros(X[k].shape) for k in range(len(X))]
            for j in range(X[0].shape[0]):
                # tile the inputs to line up with the background data samples
                tiled_X = [X[l][j:j + 1].repeat((self.data[l].shape[0],) + tuple([1] * (len(X[l].shape) - 1)))
                           for l in range(len(X))]
                joint_x = [torch.cat((tiled_X[l], self.data[l]), dim=0) for l in range(len(X))]
                sample_phis = self.gradient(model_output_ranks[j, i], joint_x)
                for l in range(len(X)):
                    phis[l][j] = (torch.from_numpy(sample_phis[l][self.data[l].shape[0]:]).to(self.device)
                                  * (X[l][j: j + 1] - self.data[l])).cpu().numpy().mean(0)
            output_phis.append(phis[0] if not self.multi_input else phis)
        return output_phis if self.multi_output else output_phis[0]


# ---- the user's side: an MNIST-like CNN explained on a test image that requires grad ----
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.MaxPool2d(2))
        self.fc = nn.Sequential(nn.Flatten(), nn.Linear(4 * 5 * 5, 10), nn.Softmax(dim=1))

    def forward(self, x):
        return self.fc(self.conv(x))


model = Net()
background = torch.rand(8, 1, 12, 12)
e = PyTorchDeepExplainer(model, background)
input_tensor = torch.rand(1, 1, 12, 12)
input_tensor.requires_grad = True
shap_values = e.shap_values(input_tensor)
print(len(shap_values), shap_values[0].shape)
