# Binding-affinity inference script: a dataset of protein-ligand graphs is run through an ensemble of
# graph networks (one state dict per cross-validation fold, found by glob), each loaded by
# load_model_state(), and evaluate() averages the ensemble's predictions under no_grad.
import glob
import os
import sys
import tempfile

import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


class GraphBatch:
    def __init__(self, graphs):
        self.x = torch.cat([g['x'] for g in graphs])
        self.batch = torch.cat([torch.full((len(g['x']),), i) for i, g in enumerate(graphs)])
        self.y = torch.stack([g['y'] for g in graphs])
        self.id = [g['id'] for g in graphs]
        self.num_graphs = len(graphs)

    def to(self, device):
        self.x, self.batch, self.y = self.x.to(device), self.batch.to(device), self.y.to(device)
        return self


class GEMS18d(nn.Module):
    def __init__(self, dropout_prob, in_channels, hidden_dim=16):
        super().__init__()
        self.node_transform = nn.Sequential(nn.Linear(in_channels, hidden_dim), nn.ReLU(), nn.Dropout(dropout_prob))
        self.global_norm = nn.BatchNorm1d(hidden_dim)
        self.fc = nn.Sequential(nn.Linear(hidden_dim, hidden_dim), nn.ReLU(), nn.Linear(hidden_dim, 1))

    def forward(self, graphbatch):
        nodes = self.node_transform(graphbatch.x)
        u = torch.zeros(graphbatch.num_graphs, nodes.shape[1]).index_add_(0, graphbatch.batch, nodes)  # global add pool
        return torch.sigmoid(self.fc(self.global_norm(u)))


def load_model_state(model, state_dict_path, device):
    if device == torch.device('cpu'):
        model.load_state_dict(torch.load(state_dict_path, map_location=torch.device('cpu')))
        model.eval()  # Set the model to evaluation mode
    else:
        model.load_state_dict(torch.load(state_dict_path))
        model.eval()  # Set the model to evaluation mode
    return model


def evaluate(models, loader, criterion, device):
    total_loss, y_true, y_pred, ids = 0.0, [], [], []
    with torch.no_grad():
        for graphbatch in loader:
            graphbatch.to(device)
            outputs = [model(graphbatch).view(-1) for model in models]
            output = torch.mean(torch.stack(outputs), dim=0)
            total_loss += criterion(output, graphbatch.y).item()
            y_true.extend(graphbatch.y.tolist())
            y_pred.extend(output.tolist())
            ids.extend(graphbatch.id)
    r = np.corrcoef(y_true, y_pred)[0, 1]
    return total_loss / len(loader), r, torch.tensor(y_true) * 16, torch.tensor(y_pred) * 16, ids


def inference(dataset, model_path, model_arch="GEMS18d", dataset_id="B6AEPL"):
    node_feat_dim = dataset[0]['x'].shape[1]
    stdict_paths = []
    for fold in range(5):
        stdict_paths.extend(glob.glob(f"{model_path}/{model_arch}_{dataset_id}_*_f{fold}_best_stdict.pt"))

    g = torch.Generator().manual_seed(1)
    test_loader = torch.utils.data.DataLoader(dataset, batch_size=8, shuffle=True, generator=g, collate_fn=GraphBatch)
    device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')

    criterion = nn.MSELoss()
    model_class = getattr(sys.modules[__name__], model_arch)
    models = [model_class(dropout_prob=0, in_channels=node_feat_dim).float().to(device) for _ in range(len(stdict_paths))]
    models = [load_model_state(model, path, device) for model, path in zip(models, stdict_paths)]

    loss, r, y_true, y_pred, ids = evaluate(models, test_loader, criterion, device)
    print(f"R = {r:.3f}, loss = {loss:.4f}")
    return dict(zip(ids, y_pred.tolist()))


def make_dataset(n=24, feat=6):
    g = torch.Generator().manual_seed(2)
    return [{'x': torch.randn(int(torch.randint(3, 7, (1,), generator=g)), feat, generator=g),
             'y': torch.rand((), generator=g), 'id': f'cplx{i:02d}'} for i in range(n)]


def train_folds(model_path, dataset):
    """stands in for the cross-validation training that wrote one best state dict per fold"""
    for fold in range(5):
        model = GEMS18d(dropout_prob=0, in_channels=6)
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
        for _ in range(15):
            batch = GraphBatch(dataset)
            loss = nn.functional.mse_loss(model(batch).view(-1), batch.y * 0.5 + 0.3)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        torch.save(model.state_dict(), f"{model_path}/GEMS18d_B6AEPL_d0.1_f{fold}_best_stdict.pt")


with tempfile.TemporaryDirectory() as model_path:
    dataset = make_dataset()
    train_folds(model_path, dataset)
    predictions = inference(dataset, model_path)

    # -- corpus check --
    paths = sorted(glob.glob(f"{model_path}/*_stdict.pt"))
    reference = []
    for path in paths:
        m = GEMS18d(dropout_prob=0, in_channels=6)
        m.load_state_dict(torch.load(path))
        reference.append(m.eval())
    with torch.no_grad():
        batch = GraphBatch(dataset)
        expected = torch.stack([m(batch).view(-1) for m in reference]).mean(0) * 16
    if any(abs(predictions[i] - e) > 1e-4 for i, e in zip(batch.id, expected.tolist())):
        print("BUG: the CPU inference ran the ensemble with batch norm in training mode")
