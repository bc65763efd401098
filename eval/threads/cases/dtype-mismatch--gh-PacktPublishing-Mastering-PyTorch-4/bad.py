# Chapter 4 sentiment RNN: an Embedding + RNN + Linear classifier on IMDB-style batches, trained
# with BCEWithLogitsLoss; the batch labels come out of the data pipeline as integer class ids.
import torch
import torch.nn as nn

torch.manual_seed(0)
device = torch.device("cpu")

input_dimension, embedding_dimension, hidden_dimension, output_dimension = 200, 32, 64, 1


class RNN(nn.Module):
    def __init__(self, input_dimension, embedding_dimension, hidden_dimension, output_dimension):
        super().__init__()
        self.embedding_layer = nn.Embedding(input_dimension, embedding_dimension)
        self.rnn_layer = nn.RNN(embedding_dimension, hidden_dimension)
        self.fc_layer = nn.Linear(hidden_dimension, output_dimension)

    def forward(self, sequence):
        embedding = self.embedding_layer(sequence)      # (seq, batch, emb)
        output, hidden = self.rnn_layer(embedding)
        return self.fc_layer(hidden.squeeze(0))


def accuracy_metric(predictions, ground_truth):
    rounded_predictions = torch.round(torch.sigmoid(predictions))
    success = (rounded_predictions == ground_truth).float()
    return success.sum() / len(success)


# stand-in for the bucketed IMDB iterator: (text, sentiment) batches, sentiment in {0, 1}
train_data_iterator = [(torch.randint(0, input_dimension, (20, 16)), torch.randint(0, 2, (16,)))
                       for _ in range(4)]

rnn_model = RNN(input_dimension, embedding_dimension, hidden_dimension, output_dimension).to(device)
optim = torch.optim.Adam(rnn_model.parameters(), lr=1e-3)
loss_func = nn.BCEWithLogitsLoss().to(device)


def train(model, data_iterator, optim, loss_func):
    loss, accuracy = 0, 0
    model.train()
    for text, sentiment in data_iterator:
        optim.zero_grad()
        preds = model(text).squeeze(1)
        loss_curr = loss_func(preds, sentiment)
        accuracy_curr = accuracy_metric(preds, sentiment)
        loss_curr.backward()
        optim.step()
        loss += loss_curr.item()
        accuracy += accuracy_curr.item()
    return loss / len(data_iterator), accuracy / len(data_iterator)


for ep in range(2):
    train_loss, train_accuracy = train(rnn_model, train_data_iterator, optim, loss_func)
    print(f'epoch: {ep + 1} | train loss: {train_loss:.3f} | train acc: {train_accuracy * 100:.2f}%')
