# ignite-style Loss metric (0.4.3) used by a DUQ training script: the evaluator's step makes the
# input require grad, and one Loss metric averages the gradient penalty, a loss_fn that takes the
# gradient of the model's output with respect to the input. Metric/Loss/Evaluator are small
# stand-ins for ignite's classes; random images stand in for CIFAR-10.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Metric:
    def __init__(self, output_transform=lambda x: x):
        self._output_transform = output_transform
        self.reset()

    def iteration_completed(self, output):
        self.update(self._output_transform(output))


class Loss(Metric):
    def __init__(self, loss_fn, output_transform=lambda x: x, batch_size=len):
        self._loss_fn = loss_fn
        self._batch_size = batch_size
        super().__init__(output_transform)

    def reset(self):
        self._sum = 0.0
        self._num_examples = 0

    def update(self, output):
        y_pred, y = output[0], output[1]
        average_loss = self._loss_fn(y_pred, y).detach()
        n = self._batch_size(y)
        self._sum += average_loss.item() * n
        self._num_examples += n

    def compute(self):
        return self._sum / self._num_examples


class Evaluator:
    def __init__(self, process_function, metrics):
        self._process_function = process_function
        self.metrics = metrics

    def run(self, loader):
        for metric in self.metrics.values():
            metric.reset()
        for batch in loader:
            output = self._process_function(self, batch)
            for metric in self.metrics.values():
                metric.iteration_completed(output)
        return {name: metric.compute() for name, metric in self.metrics.items()}


class CNN_DUQ(nn.Module):
    def __init__(self, num_classes=10, embedding_size=16, length_scale=0.1):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(4), nn.Flatten())
        self.W = nn.Parameter(torch.normal(torch.zeros(embedding_size, num_classes, 128), 0.05))
        self.register_buffer("m", torch.normal(torch.zeros(embedding_size, num_classes), 1))
        self.sigma = length_scale

    def forward(self, x):
        z = torch.einsum("ij,mnj->imn", self.features(x), self.W)
        diff = z - self.m.unsqueeze(0)
        return (-(diff**2)).mean(1).div(2 * self.sigma**2).exp()


def calc_gradients_input(x, y_pred):
    gradients = torch.autograd.grad(
        outputs=y_pred,
        inputs=x,
        grad_outputs=torch.ones_like(y_pred),
        create_graph=True,
    )[0]
    return gradients.flatten(start_dim=1)


def calc_gradient_penalty(x, y_pred):
    gradients = calc_gradients_input(x, y_pred)
    grad_norm = gradients.norm(2, dim=1)
    return ((grad_norm - 1) ** 2).mean()


model = CNN_DUQ()


def eval_step(engine, batch):
    model.eval()
    x, y = batch
    x.requires_grad_(True)
    y_pred = model(x)
    return y_pred, y, x, y_pred.sum(1)


def output_transform_bce(output):
    y_pred, y, x, y_pred_sum = output
    return y_pred, F.one_hot(y, 10).float()


def output_transform_gp(output):
    y_pred, y, x, y_pred_sum = output
    return x, y_pred_sum


evaluator = Evaluator(eval_step, {
    "bce": Loss(F.binary_cross_entropy, output_transform=output_transform_bce),
    "gradient_penalty": Loss(calc_gradient_penalty, output_transform=output_transform_gp),
})
test_loader = [(torch.rand(8, 3, 16, 16), torch.randint(0, 10, (8,))) for _ in range(3)]
metrics = evaluator.run(test_loader)
print("Test Results - BCE: {:.4f} GP: {:.4f}".format(metrics["bce"], metrics["gradient_penalty"]))
