# Click prediction with an LSTM on Colab: hourly feature windows from a Dataset, an LSTM_model whose
# forward builds zero initial states h0/c0, the model and every batch moved to `device` (the GPU in
# the original, the meta device stands in for it here), float64 throughout.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)


class click_dataset(Dataset):
    def __init__(self, data):
        self.features, self.labels = data

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, idx):
        return self.features[idx], self.labels[idx]


class LSTM_model(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers, num_classes):
        super(LSTM_model, self).__init__()
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True)
        self.fc = nn.Linear(hidden_size, num_classes)

    def forward(self, x):
        h0 = torch.zeros(self.num_layers, x.size(0), self.hidden_size, device=x.device, dtype=torch.double)
        c0 = torch.zeros(self.num_layers, x.size(0), self.hidden_size, device=x.device, dtype=torch.double)
        out, _ = self.lstm(x, (h0, c0))
        return self.fc(out[:, -1, :])


feature_num, n_hour, batch_size = 6, 5, 8
train = (torch.randn(32, n_hour, feature_num, dtype=torch.double), torch.randint(0, 2, (32,)))
train_data = click_dataset(train)
train_dataloader = DataLoader(train_data, batch_size=batch_size, shuffle=False, num_workers=0)

device = torch.device("meta")  # torch.device('cuda' if torch.cuda.is_available() else 'cpu') in the original
model = LSTM_model(input_size=feature_num, hidden_size=16, num_layers=2, num_classes=2).double().to(device)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.001)

for epoch in range(2):
    for i, (data, label) in enumerate(train_dataloader):
        data = data.to(device)
        label = label.to(device)
        outputs = model(data)
        loss = criterion(outputs, label)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(epoch, loss.shape)
