# Real-world anomaly detection in surveillance videos (Sultani et al.) as in the project: the C3D
# features of every video are stored as a text file (one line per 32 segments), read_features()
# parses a file into a tensor, FeaturesLoader draws a bucket of normal and a bucket of anomalous
# videos per iteration, and the AnomalyDetector MLP is trained with the MIL ranking objective plus
# an L2 regularizer. Random feature files written to a temporary folder stand in for UCF-Crime.
import os
import tempfile
from typing import Dict, Optional

import numpy as np
import torch
from torch import Tensor, nn

torch.manual_seed(0)
np.random.seed(0)


def read_features(file_path, cache: Optional[Dict[str, Tensor]] = None) -> Tensor:
    if cache is not None and file_path in cache:
        return cache[file_path]
    if not os.path.exists(file_path):
        raise FileNotFoundError(f"Feature doesn't exist: `{file_path}`")
    features = None
    with open(file_path) as fp:
        data = fp.read().splitlines(keepends=False)
        features = torch.tensor(
            np.stack([line.split(" ") for line in data]).astype(np.float32)
        )
    if cache is not None:
        cache[file_path] = features
    return features


class FeaturesLoader:
    def __init__(self, features_path, feature_dim, annotation_path, bucket_size=30, iterations=20000):
        self._features_path = features_path
        self._feature_dim = feature_dim
        self._bucket_size = bucket_size
        self.features_list_normal, self.features_list_anomaly = FeaturesLoader._get_features_list(
            features_path=self._features_path, annotation_path=annotation_path)
        self._iterations = iterations
        self._features_cache = {}

    def __len__(self):
        return self._iterations

    def __getitem__(self, index):
        return self.get_features()

    def get_features(self):
        normal_paths = np.random.choice(self.features_list_normal, size=self._bucket_size)
        abnormal_paths = np.random.choice(self.features_list_anomaly, size=self._bucket_size)
        all_paths = np.concatenate([normal_paths, abnormal_paths])
        features = torch.stack(
            [read_features(f"{feature_subpath}.txt", self._features_cache) for feature_subpath in all_paths])
        return features, torch.cat([torch.zeros(self._bucket_size), torch.ones(self._bucket_size)])

    @staticmethod
    def _get_features_list(features_path, annotation_path):
        features_list_normal = []
        features_list_anomaly = []
        with open(annotation_path) as f:
            for line in f.read().splitlines(keepends=False):
                file = line.split()[0].split(".")[0]
                feature_path = os.path.join(features_path, file)
                if "Normal" in feature_path:
                    features_list_normal.append(feature_path)
                else:
                    features_list_anomaly.append(feature_path)
        return features_list_normal, features_list_anomaly


class AnomalyDetector(nn.Module):
    def __init__(self, input_dim=4096) -> None:
        super().__init__()
        self.fc1 = nn.Linear(input_dim, 512)
        self.relu1 = nn.ReLU()
        self.dropout1 = nn.Dropout(0.6)
        self.fc2 = nn.Linear(512, 32)
        self.dropout2 = nn.Dropout(0.6)
        self.fc3 = nn.Linear(32, 1)
        self.sig = nn.Sigmoid()
        nn.init.xavier_normal_(self.fc1.weight)
        nn.init.xavier_normal_(self.fc2.weight)
        nn.init.xavier_normal_(self.fc3.weight)

    def forward(self, x: Tensor) -> Tensor:
        x = self.dropout1(self.relu1(self.fc1(x)))
        x = self.dropout2(self.fc2(x))
        x = self.sig(self.fc3(x))
        return x


def custom_objective(y_pred: Tensor, y_true: Tensor) -> Tensor:
    lambdas = 8e-5
    normal_vids_indices = torch.where(y_true == 0)
    anomal_vids_indices = torch.where(y_true == 1)
    normal_segments_scores = y_pred[normal_vids_indices].squeeze(-1)
    anomal_segments_scores = y_pred[anomal_vids_indices].squeeze(-1)
    normal_segments_scores_maxes = normal_segments_scores.max(dim=-1)[0]
    anomal_segments_scores_maxes = anomal_segments_scores.max(dim=-1)[0]
    hinge_loss = 1 - anomal_segments_scores_maxes + normal_segments_scores_maxes
    hinge_loss = torch.max(hinge_loss, torch.zeros_like(hinge_loss))
    smoothed_scores = anomal_segments_scores[:, 1:] - anomal_segments_scores[:, :-1]
    smoothed_scores_sum_squared = smoothed_scores.pow(2).sum(dim=-1)
    sparsity_loss = anomal_segments_scores.sum(dim=-1)
    return (hinge_loss + lambdas * smoothed_scores_sum_squared + lambdas * sparsity_loss).mean()


class RegularizedLoss(torch.nn.Module):
    def __init__(self, model, original_objective, lambdas=0.001):
        super().__init__()
        self.lambdas = lambdas
        self.model = model
        self.objective = original_objective

    def forward(self, y_pred, y_true):
        fc1_params = torch.cat(tuple([x.view(-1) for x in self.model.fc1.parameters()]))
        fc2_params = torch.cat(tuple([x.view(-1) for x in self.model.fc2.parameters()]))
        fc3_params = torch.cat(tuple([x.view(-1) for x in self.model.fc3.parameters()]))
        l1_regularization = self.lambdas * torch.norm(fc1_params, p=2)
        l2_regularization = self.lambdas * torch.norm(fc2_params, p=2)
        l3_regularization = self.lambdas * torch.norm(fc3_params, p=2)
        return self.objective(y_pred, y_true) + l1_regularization + l2_regularization + l3_regularization


feature_dim = 64  # 4096 for C3D fc6 features
with tempfile.TemporaryDirectory() as features_path:
    names = [f"Normal_Videos_{k:03d}_x264" for k in range(6)] + [f"Robbery{k:03d}_x264" for k in range(6)]
    for name in names:
        np.savetxt(os.path.join(features_path, name + ".txt"), np.random.rand(32, feature_dim), fmt="%.6f")
    annotation_path = os.path.join(features_path, "Train_Annotation.txt")
    with open(annotation_path, "w") as f:
        f.write("\n".join(f"{name}.mp4 100" for name in names))

    train_loader = FeaturesLoader(features_path=features_path, feature_dim=feature_dim,
                                  annotation_path=annotation_path, bucket_size=4, iterations=5)
    network = AnomalyDetector(feature_dim)
    optimizer = torch.optim.Adadelta(network.parameters(), lr=0.01, eps=1e-8)
    criterion = RegularizedLoss(network, custom_objective)
    network.train()
    for iteration in range(len(train_loader)):
        features, labels = train_loader[iteration]
        outputs = network(features)
        loss = criterion(outputs, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("iteration", iteration, "loss", round(loss.item(), 4))
