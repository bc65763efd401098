import os
import tempfile

import pandas as pd
import torch
from torch import nn

folder = tempfile.mkdtemp()
path = os.path.join(folder, "houses.csv")
with open(path, "w") as f:
    f.write("rooms,area,age,price\n3,70.5,10,200.0\n4,95.0,3,310.5\n2,40.2,30,120.0\n")

df = pd.read_csv(path)
features = df.drop(columns=["price"]).values
target = df["price"].values

model = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 1))
x = torch.tensor(features, dtype=torch.float32)
y = torch.tensor(target, dtype=torch.float32).unsqueeze(1)
loss = nn.MSELoss()(model(x), y)
loss.backward()
