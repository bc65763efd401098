# Fine-tuning a TorchMoji-style classifier (examples/finetune_youtube_last): the model's
# forward adapts its return format to the input type, then the last layer is trained.
import torch
import torch.nn as nn
from torch.autograd import Variable

torch.manual_seed(0)


class TorchMoji(nn.Module):
    def __init__(self, nb_classes, nb_tokens=100, embed_dim=16, hidden=16):
        super().__init__()
        self.embed = nn.Embedding(nb_tokens, embed_dim)
        self.lstm = nn.LSTM(embed_dim, hidden, batch_first=True)
        self.attention = nn.Linear(hidden, 1)
        self.output_layer = nn.Linear(hidden, nb_classes)

    def forward(self, input_seqs):
        # Check if we have Torch.LongTensor inputs or not Torch.Variable (assume Numpy array in this case), take note to return same format
        return_numpy = False
        return_tensor = False
        if isinstance(input_seqs, (torch.LongTensor,)):
            input_seqs = Variable(input_seqs)
            return_tensor = True
        elif not isinstance(input_seqs, Variable):
            input_seqs = Variable(torch.from_numpy(input_seqs.astype("int64")).long())
            return_numpy = True

        x = self.embed(input_seqs)
        h, _ = self.lstm(x)
        weights = torch.softmax(self.attention(h).squeeze(-1), dim=1)
        x = (h * weights.unsqueeze(-1)).sum(1)
        outputs = self.output_layer(x)

        # Adapt return format if needed
        if return_numpy:
            outputs = outputs.data.numpy()
        return outputs


def train_by_last(model, X, y, epochs=3):
    for p in model.parameters():
        p.requires_grad = False
    for p in model.output_layer.parameters():
        p.requires_grad = True
    optim = torch.optim.Adam(model.output_layer.parameters(), lr=1e-2)
    loss_op = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        optim.zero_grad()
        output = model(X)
        loss = loss_op(output, y)
        loss.backward()
        optim.step()
        print(f"epoch {epoch} val loss {loss.item():.5f}")


model = TorchMoji(nb_classes=2)
X = torch.randint(0, 100, (32, 12))
y = torch.randint(0, 2, (32,))
train_by_last(model, X, y)
