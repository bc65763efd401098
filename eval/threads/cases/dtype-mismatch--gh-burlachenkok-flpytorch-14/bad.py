# FL_PyTorch's client gradient oracle: evaluateSgd() samples a minibatch record by record from the
# dataloader's dataset, casts data and labels to the model's floating point type (model.fl_dtype,
# set from the --fp argument) and the device, and computes the loss through
# model_funcs.compute_loss() before backward. Here the criterion is CrossEntropyLoss (--loss
# crossentropy); a synthetic classification dataset stands in for the federated CIFAR/EMNIST shards.
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


def compute_loss(model, criterion, output, label):
    if type(criterion) is torch.nn.MSELoss and not label.is_floating_point():
        label = label.float()

    if type(criterion) is torch.nn.BCELoss and not label.is_floating_point():
        label = label.float()

    if type(output) == list and len(output) > 1:
        loss = sum([criterion(out, label) for out in output])
    else:
        loss = criterion(output, label)

    return loss


def evaluateSgd(client_state, model, dataloader, criterion, update_statistics=True, device="cpu",
                evaluate_function=False, batch_size_ds=8):
    model.train(True)
    total_number_of_samples = len(dataloader.dataset)
    indicies = torch.randperm(total_number_of_samples)[:batch_size_ds * 2].tolist()
    sampled_samples = len(indicies)
    iterations = sampled_samples // batch_size_ds
    function_value = 0.0

    for i in range(iterations):
        data = []
        label = []
        for j in range(batch_size_ds):
            index = i * batch_size_ds + j
            if index >= sampled_samples:
                break
            d, t = dataloader.dataset[indicies[index]]
            data.append(d.unsqueeze(0))
            if not torch.is_tensor(t):
                if type(criterion) is torch.nn.MSELoss:
                    label.append(torch.Tensor([t]))
                else:
                    label.append(torch.LongTensor([t]))
            else:
                label.append(t.unsqueeze(0))

        data = torch.cat(data)
        label = torch.cat(label)

        start_ts = time.time()
        batch_size = data.shape[0]
        if str(data.device) != device or str(
                label.device) != device or data.dtype != model.fl_dtype or label.dtype != model.fl_dtype:
            data, label = data.to(device=device, dtype=model.fl_dtype), label.to(device=device, dtype=model.fl_dtype)

        if update_statistics:
            client_state["stats"]["dataload_duration"] += (time.time() - start_ts)
            client_state['stats']['full_gradient_oracles'] += float(batch_size) / total_number_of_samples
            client_state['stats']['samples_gradient_oracles'] += batch_size

        output = model(data)
        loss = compute_loss(model, criterion, output, label)
        loss = loss * (1.0 / sampled_samples)
        if evaluate_function:
            function_value += loss
        loss.backward()

    if evaluate_function:
        return function_value.item()
    return None


X = torch.randn(64, 20)
y = [int(v) for v in torch.randint(0, 10, (64,))]  # the torchvision datasets give int targets
dataset = [(X[k], y[k]) for k in range(64)]
dataloader = DataLoader(dataset, batch_size=8)

model = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 10))
model.fl_dtype = torch.float32  # args.fp == "fp32"
criterion = nn.CrossEntropyLoss(reduction='sum')
client_state = {"stats": {"dataload_duration": 0.0, "full_gradient_oracles": 0.0, "samples_gradient_oracles": 0}}

for rnd in range(3):
    model.zero_grad()
    f = evaluateSgd(client_state, model, dataloader, criterion, evaluate_function=True)
    with torch.no_grad():
        for p in model.parameters():
            p -= 0.1 * p.grad
    print("round", rnd, "local loss", round(f, 4))
