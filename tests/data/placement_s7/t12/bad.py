import numpy as np
import torch
from torch import nn
from sklearn.model_selection import train_test_split

X = np.random.rand(50, 4)
y = (X[:, 0] > 0.5).astype(np.float32)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
inputs = torch.from_numpy(X_train)
labels = torch.from_numpy(y_train).unsqueeze(1)
loss = nn.BCEWithLogitsLoss()(model(inputs), labels)
loss.backward()
