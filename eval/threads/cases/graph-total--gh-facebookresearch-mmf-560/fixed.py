# Multimodal framework trainer: after each update the report's loss dict (and the summed
# total loss) are pushed into a Meter of smoothed values used for the log line.
from collections import defaultdict, deque

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SmoothedValue:
    def __init__(self, window_size=20):
        self.deque = deque(maxlen=window_size)
        self.averaged_value_deque = deque(maxlen=window_size)
        self.batch_sizes = deque(maxlen=window_size)
        self.total_samples = 0
        self.total = 0.0
        self.count = 0

    def update(self, value, batch_size):
        self.deque.append(value * batch_size)
        self.averaged_value_deque.append(value)
        self.batch_sizes.append(batch_size)
        self.count += 1
        self.total_samples += batch_size
        self.total += value * batch_size

    @property
    def global_avg(self):
        return self.total / self.total_samples


class Meter:
    def __init__(self, delimiter=", "):
        self.meters = defaultdict(SmoothedValue)
        self.delimiter = delimiter

    def update(self, update_dict, batch_size):
        for k, v in update_dict.items():
            self.meters[k].update(v, batch_size)

    def __str__(self):
        return self.delimiter.join(f"{name}: {float(m.global_avg):.4f}" for name, m in self.meters.items())


class Report(dict):
    def __getattr__(self, key):
        return self[key]


def reduce_dict(dictionary):
    # single process: nothing to all-reduce
    return dictionary


class TrainerReportingMixin:
    meter = Meter()

    def update_meter(self, report, meter=None, eval_mode=False):
        if meter is None:
            meter = self.meter
        if not eval_mode:
            loss_dict = report.losses
            reduced_loss_dict = reduce_dict(loss_dict)
        with torch.no_grad():
            meter_update_dict = {}
            if not eval_mode:
                loss_key = report.dataset_type + "/total_loss"
                reduced_loss = sum([loss.mean() for loss in reduced_loss_dict.values()])
                if hasattr(reduced_loss, "item"):
                    reduced_loss = reduced_loss.item()
                meter_update_dict.update({loss_key: reduced_loss})
                for key in reduced_loss_dict:
                    meter_update_dict[key] = reduced_loss_dict[key].item()
            meter.update(meter_update_dict, report.batch_size)


class VQATrainer(TrainerReportingMixin):
    def __init__(self):
        self.model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
        self.optimizer = torch.optim.Adamax(self.model.parameters(), lr=1e-3)

    def run_training_batch(self, batch):
        scores = self.model(batch["features"])
        losses = {"train/vqa2/logit_bce": F.binary_cross_entropy_with_logits(scores, batch["targets"])}
        report = Report(losses=losses, dataset_type="train", batch_size=batch["features"].size(0))
        self.optimizer.zero_grad()
        sum(losses.values()).backward()
        self.optimizer.step()
        return report

    def training_loop(self, max_updates=12):
        for _ in range(max_updates):
            batch = {"features": torch.randn(16, 32), "targets": (torch.rand(16, 10) < 0.2).float()}
            report = self.run_training_batch(batch)
            self.update_meter(report)
        print(self.meter)


trainer = VQATrainer()
trainer.training_loop()

# -- corpus check --
kept = trainer.meter.meters["train/vqa2/logit_bce"].averaged_value_deque
if any(torch.is_tensor(v) and v.grad_fn is not None for v in kept):
    print("BUG: the meter holds the loss tensors of past batches together with their autograd graphs")
