# Stack Overflow 75102134: per-capita income of US counties regressed on the numbers of bachelor
# and associate degrees, read with pandas and turned into tensors with torch.tensor(...values).
# The degree counts are integer columns. A random table stands in for the CSV file.
import numpy as np
import pandas as pd
import torch
import torch.nn as nn

torch.manual_seed(0)
rng = np.random.default_rng(0)

n = 200
df = pd.DataFrame({
    "bachelor_degree_numbers_2016_2020": rng.integers(100, 50000, n),
    "associate_degree_numbers_2016_2020": rng.integers(100, 30000, n),
})
df["per_capita_personal_income_2020"] = (
    20000 + 0.3 * df["bachelor_degree_numbers_2016_2020"] + 0.1 * df["associate_degree_numbers_2016_2020"]
    + rng.normal(0, 500, n)
)

X = torch.tensor(df[["bachelor_degree_numbers_2016_2020", "associate_degree_numbers_2016_2020"]].values)
y = torch.tensor(df["per_capita_personal_income_2020"].values)


class LinearRegression(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(2, 16)
        self.relu = nn.ReLU()
        self.output = nn.Linear(16, 1)

    def forward(self, x):
        return self.output(self.relu(self.hidden(x)))


model = LinearRegression()
criterion = nn.MSELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)

for epoch in range(50):
    optimizer.zero_grad()
    outputs = model(X)
    loss = criterion(outputs.squeeze(1), y)
    loss.backward()
    optimizer.step()
print(f"final loss {loss.item():.1f}")
