# FGSM written as a class: the input gets requires_grad=True, is moved to the model's device,
# and after backward the sign of the input's gradient makes the adversarial example.
# (torch.float64 stands for the GPU here: like .to("cuda") on a CPU tensor, it returns a copy.)
import torch
import torch.nn as nn
from torch.autograd import Variable

torch.manual_seed(0)


class FGSM:
    def __init__(self, model, criterion, epsilon, device):
        self.model = model
        self.criterion = criterion
        self.epsilon = epsilon
        self.device = device
        assert isinstance(model, torch.nn.Module), "Input parameter model is not nn.Module. Check the model"
        assert isinstance(criterion, torch.nn.Module), "Input parameter criterion is no Loss. Check the criterion"
        assert (0 <= epsilon <= 1), "epsilon must be 0 <= epsilon <= 1"
        self.model.eval()

    def __call__(self, input, labels):
        # For calculating gradient
        input_for_gradient = Variable(input.to(self.device), requires_grad=True)
        out = self.model(input_for_gradient)
        loss = self.criterion(out, Variable(labels))

        # Calculate gradient
        loss.backward()

        # Calculate sign of gradient
        signs = torch.sign(input_for_gradient.grad.data)

        # Add
        input_for_gradient.data = input_for_gradient.data + (self.epsilon * signs)
        return input_for_gradient, signs


device = torch.float64
model = nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 10)).to(device)
attack = FGSM(model, nn.CrossEntropyLoss(), 0.1, device)
images, labels = torch.rand(4, 1, 28, 28), torch.randint(0, 10, (4,))
adversarial, signs = attack(images, labels)
print("perturbed", adversarial.shape, "changed", int((signs != 0).sum()))
