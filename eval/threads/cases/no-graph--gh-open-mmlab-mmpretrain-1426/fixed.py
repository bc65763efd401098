# mmpretrain multi-task classification: MultiTaskHead wraps one head per task, and loss_convertor
# wraps each head's loss so that only the samples annotated for that task (a MultiTaskDataSample
# holds the fields of the tasks it is labelled for) contribute; the losses of all tasks are summed
# (parse_losses) and backpropagated. With a partially labelled dataset a batch can hold no label of
# any task. A small backbone, two linear heads and random images stand in for the config's model.
from typing import Sequence

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MultiTaskDataSample(dict):
    pass


def loss_convertor(loss_func, task_name):

    def wrapped(inputs, data_samples, **kwargs):
        mask = torch.empty(len(data_samples), dtype=torch.bool)
        task_data_samples = []
        for i, data_sample in enumerate(data_samples):
            assert isinstance(data_sample, MultiTaskDataSample)
            sample_mask = task_name in data_sample
            mask[i] = sample_mask
            if sample_mask:
                task_data_samples.append(data_sample.get(task_name))

        if len(task_data_samples) == 0:
            # This makes it possible to perform loss.backward when a
            # task does not have gt_labels within a batch.
            loss = (inputs[0] * 0).sum()
            return {'loss': loss, 'mask_size': torch.tensor(0.)}

        # Mask the inputs of the task
        def mask_inputs(inputs, mask):
            if isinstance(inputs, Sequence):
                return type(inputs)([mask_inputs(input, mask) for input in inputs])
            elif isinstance(inputs, torch.Tensor):
                return inputs[mask]

        masked_inputs = mask_inputs(inputs, mask)
        loss_output = loss_func(masked_inputs, task_data_samples, **kwargs)
        loss_output['mask_size'] = mask.sum().to(torch.float)
        return loss_output

    return wrapped


class LinearClsHead(nn.Module):
    def __init__(self, num_classes, in_channels):
        super().__init__()
        self.fc = nn.Linear(in_channels, num_classes)

    def forward(self, feats):
        return self.fc(feats[-1])

    def loss(self, feats, data_samples, **kwargs):
        target = torch.tensor([int(s) for s in data_samples])
        return {'loss': F.cross_entropy(self(feats), target)}


class MultiTaskHead(nn.Module):
    def __init__(self, task_heads):
        super().__init__()
        self.task_heads = nn.ModuleDict()
        for task_name, sub_head in task_heads.items():
            sub_head.loss = loss_convertor(sub_head.loss, task_name)
            self.task_heads[task_name] = sub_head

    def loss(self, feats, data_samples, **kwargs):
        losses = dict()
        for task_name, head in self.task_heads.items():
            head_loss = head.loss(feats, data_samples, **kwargs)
            for k, v in head_loss.items():
                losses[f'{task_name}_{k}'] = v
        return losses


def parse_losses(losses):
    return sum(v for k, v in losses.items() if 'loss' in k)


backbone = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
head = MultiTaskHead({'color': LinearClsHead(3, 8), 'shape': LinearClsHead(4, 8)})
optimizer = torch.optim.SGD(list(backbone.parameters()) + list(head.parameters()), lr=0.1)

batches = [
    [MultiTaskDataSample(color=1, shape=2), MultiTaskDataSample(color=0), MultiTaskDataSample(shape=3)],
    [MultiTaskDataSample(), MultiTaskDataSample(), MultiTaskDataSample()],  # no label of either task
]
for i, data_samples in enumerate(batches):
    feats = (backbone(torch.rand(len(data_samples), 3, 16, 16)),)
    losses = head.loss(feats, data_samples)
    loss = parse_losses(losses)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(i, {k: round(v.item(), 4) for k, v in losses.items()})
