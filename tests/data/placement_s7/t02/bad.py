import numpy as np
import pandas as pd
import torch
from torch import nn

df = pd.DataFrame(np.random.rand(20, 4), columns=["a", "b", "c", "price"])
X = torch.tensor(df[["a", "b", "c"]].values)
y = torch.tensor(df["price"].values, dtype=torch.float32)

model = nn.Linear(3, 1)
opt = torch.optim.Adam(model.parameters())
loss = nn.MSELoss()(model(X).squeeze(1), y)
loss.backward()
