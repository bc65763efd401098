# Distributed backdoor attack FL code, in the shape of helper.py / main.py: each round a few
# clients train a copy of the global model, accumulate_weight() sums their state_dict deltas into
# weight_accumulator (one zeros_like() per state_dict entry), and average_shrink_models() adds the
# averaged delta to the target model's state_dict in place. The model has BatchNorm, so the
# state_dict holds the int64 buffer num_batches_tracked. Synthetic tensors stand in for
# CIFAR/Tiny-ImageNet; the params dict stands for the yaml file.
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SimpleNet(nn.Module):
    def __init__(self, num_classes=10):
        super(SimpleNet, self).__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8 * 4 * 4, num_classes)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.adaptive_avg_pool2d(x, 4)
        return self.fc(x.flatten(1))


class Helper:
    def __init__(self, params):
        self.params = params
        self.target_model = SimpleNet()

    def init_weight_accumulator(self, target_model):
        weight_accumulator = dict()
        for name, data in target_model.state_dict().items():
            weight_accumulator[name] = torch.zeros_like(data)
        return weight_accumulator

    def accumulate_weight(self, weight_accumulator, epochs_submit_update_dict, state_keys):
        for state_key in state_keys:
            local_model_update_list = epochs_submit_update_dict[state_key]
            for local_model_update_dict in local_model_update_list:
                for name, data in local_model_update_dict.items():
                    weight_accumulator[name].add_(data)
        return weight_accumulator

    def average_shrink_models(self, weight_accumulator, target_model, epoch_interval):
        """
        Perform FedAvg algorithm and perform some clustering on top of it.
        """
        for name, data in target_model.state_dict().items():
            if self.params.get('tied', False) and name == 'decoder.weight':
                continue

            update_per_layer = weight_accumulator[name] * (self.params["eta"] / self.params["no_models"])
            data.add_(update_per_layer)
        return True


def local_train(helper, model, data, labels):
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=helper.params['lr'])
    for _ in range(helper.params['internal_epochs']):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(data), labels)
        loss.backward()
        optimizer.step()


params = {'eta': 1.0, 'no_models': 2, 'lr': 0.1, 'internal_epochs': 2, 'epochs': 2}
helper = Helper(params)
clients = {k: (torch.randn(16, 3, 8, 8), torch.randint(0, 10, (16,))) for k in range(4)}

for epoch in range(1, params['epochs'] + 1):
    agent_name_keys = [epoch % 4, (epoch + 1) % 4]
    weight_accumulator = helper.init_weight_accumulator(helper.target_model)
    epochs_submit_update_dict = {}
    for agent in agent_name_keys:
        model = copy.deepcopy(helper.target_model)
        target_params = {name: p.clone() for name, p in helper.target_model.state_dict().items()}
        local_train(helper, model, *clients[agent])
        local_model_update_dict = {name: data - target_params[name] for name, data in model.state_dict().items()}
        epochs_submit_update_dict[agent] = [local_model_update_dict]
    helper.accumulate_weight(weight_accumulator, epochs_submit_update_dict, agent_name_keys)
    helper.average_shrink_models(weight_accumulator, helper.target_model, epoch_interval=1)
    print("epoch", epoch, "aggregated")
