# TorchSig example 02: a signal classifier trained on Sig53 (IQ samples as 2 x N) keeps its best
# checkpoint; the example then rebuilds the model, loads the checkpoint and evaluates it on the
# validation set on the GPU. The meta device stands in for the GPU (accuracy is reported by shape, meta tensors
# hold no values); random IQ data stands in for Sig53 and a small 1-D CNN for EfficientNet.
import os
import tempfile

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
device = torch.device("meta")  # torch.device("cuda" if torch.cuda.is_available() else "cpu")
num_classes = 53


def efficientnet1d(num_classes):
    return nn.Sequential(
        nn.Conv1d(2, 16, 7, padding=3), nn.BatchNorm1d(16), nn.ReLU(),
        nn.Conv1d(16, 32, 5, padding=2, stride=2), nn.BatchNorm1d(32), nn.ReLU(),
        nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(32, num_classes))


val_dataset = TensorDataset(torch.randn(32, 2, 128), torch.randint(0, num_classes, (32,)))
val_dataloader = DataLoader(val_dataset, batch_size=16)

# Train: the example fits a LightningModule with pl.Trainer(gpus=1), which writes the best
# checkpoint; a freshly initialized model's weights stand in for that checkpoint here.
checkpoint_dir = tempfile.mkdtemp()
checkpoint_filename = os.path.join(checkpoint_dir, "checkpoint.ckpt")
torch.save({"state_dict": efficientnet1d(num_classes).state_dict()}, checkpoint_filename)

# Evaluation of the trained model: rebuild it and load the best checkpoint
checkpoint = torch.load(checkpoint_filename, map_location=lambda storage, loc: storage)
example_model = efficientnet1d(num_classes)
example_model.load_state_dict(checkpoint["state_dict"])
example_model = example_model.eval()

num_test_examples = len(val_dataset)
predictions = []
for data, label in val_dataloader:
    data = data.to(device)
    with torch.no_grad():
        pred_tmp = example_model(data)
    predictions.append(pred_tmp.argmax(dim=1))
predictions = torch.cat(predictions)
print(f"predictions {tuple(predictions.shape)} for {num_test_examples} examples")
