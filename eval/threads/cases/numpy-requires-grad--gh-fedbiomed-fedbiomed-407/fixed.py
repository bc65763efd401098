# Fed-BioMed training plans: the base class runs the validation routine over the node's test
# loader and reports every batch's metric to the history monitor, converting the values to python
# floats; TorchTrainingPlan switches the model to eval mode around it. A researcher's training plan
# ("general-training-and-validation" notebook) defines a custom testing_step that returns
# [nll loss, nll loss, accuracy]. A small MLP and random MNIST-sized data stand in for the notebook's
# network and the node's dataset.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


def convert_iterator_to_list_of_python_floats(iterator):
    values = []
    for v in iterator:
        if isinstance(v, torch.Tensor):
            v = v.numpy()
        values.append(float(v))
    return values


class HistoryMonitor:
    def __init__(self):
        self.records = []

    def add_scalar(self, metric, iteration, **kwargs):
        self.records.append((iteration, metric))
        print("validation batch", iteration, {k: round(v, 4) for k, v in metric.items()})


class BaseTrainingPlan:
    testing_data_loader = None

    @staticmethod
    def _create_metric_result_dict(metric, metric_name="Custom"):
        if isinstance(metric, torch.Tensor):
            metric = metric.numpy()
        if isinstance(metric, np.ndarray):
            metric = list(metric) if metric.shape else float(metric)
        if isinstance(metric, (int, float, np.integer, np.floating)) and not isinstance(metric, bool):
            return {metric_name: float(metric)}
        metric_names = [f"{metric_name}_{i + 1}" for i in range(len(metric))]
        values = convert_iterator_to_list_of_python_floats(metric)
        return dict(zip(metric_names, values))

    def testing_routine(self, metric, metric_args, history_monitor, before_train):
        n_batches = len(self.testing_data_loader)
        if hasattr(self, "testing_step"):
            evaluate = getattr(self, "testing_step")
            metric_name = "Custom"
        for idx, (data, target) in enumerate(self.testing_data_loader, 1):
            m_value = evaluate(data, target)
            if history_monitor is not None:
                m_dict = self._create_metric_result_dict(m_value, metric_name)
                history_monitor.add_scalar(metric=m_dict, iteration=idx, epoch=None, test=True,
                                           test_on_global_updates=before_train, num_batches=n_batches)


class TorchTrainingPlan(BaseTrainingPlan):
    def __init__(self, model):
        self._model = model

    def testing_routine(self, metric, metric_args, history_monitor, before_train):
        try:
            self._model.eval()  # pytorch switch for model inference-mode
            with torch.no_grad():
                super().testing_routine(
                    metric, metric_args, history_monitor, before_train
                )
        finally:
            self._model.train()  # restore training behaviors


# -- the researcher's training plan --
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(28 * 28, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        return F.log_softmax(self.fc2(F.relu(self.fc1(x.flatten(1)))), dim=1)


class MyTrainingPlan(TorchTrainingPlan):
    def testing_step(self, data, target):
        pred = self._model(data)
        loss1 = F.nll_loss(pred, target)
        loss2 = F.nll_loss(pred, target)
        acc = (pred.argmax(dim=1) == target).float().mean()
        return [loss1, loss2, acc]


plan = MyTrainingPlan(Net())
plan.testing_data_loader = DataLoader(TensorDataset(torch.rand(64, 1, 28, 28), torch.randint(0, 10, (64,))), batch_size=32)
plan.testing_routine(metric=None, metric_args={}, history_monitor=HistoryMonitor(), before_train=False)
