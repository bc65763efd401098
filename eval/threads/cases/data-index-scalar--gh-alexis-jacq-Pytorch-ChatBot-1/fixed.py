# Seq2seq chatbot: an encoder GRU reads the question, a decoder GRU generates the answer word by word
# with teacher forcing; train() returns the loss per decoded word for the progress print.
import random

import torch
import torch.nn as nn

torch.manual_seed(0)
random.seed(0)


class hp:
    max_length = 6
    hidden_size = 32
    n_words = 40
    teacher_forcing_ratio = 0.5


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(hp.n_words, hp.hidden_size)
        self.gru = nn.GRU(hp.hidden_size, hp.hidden_size)

    def forward(self, input_variable):
        return self.gru(self.embedding(input_variable).unsqueeze(1))


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(hp.n_words, hp.hidden_size)
        self.gru = nn.GRU(hp.hidden_size, hp.hidden_size)
        self.out = nn.Linear(hp.hidden_size, hp.n_words)

    def forward(self, word, hidden):
        output, hidden = self.gru(self.embedding(word).view(1, 1, -1), hidden)
        return torch.log_softmax(self.out(output[0]), dim=1), hidden


def train(input_variable, target_variable, encoder, decoder, encoder_optimizer, decoder_optimizer, criterion):
    encoder_optimizer.zero_grad()
    decoder_optimizer.zero_grad()
    loss = 0
    _, encoder_hidden = encoder(input_variable)
    decoder_input = torch.tensor([0])
    decoder_hidden = encoder_hidden
    use_teacher_forcing = random.random() < hp.teacher_forcing_ratio
    for di in range(target_variable.size(0)):
        decoder_output, decoder_hidden = decoder(decoder_input, decoder_hidden)
        loss += criterion(decoder_output, target_variable[di].view(1))
        if use_teacher_forcing:
            decoder_input = target_variable[di].view(1)
        else:
            decoder_input = decoder_output.argmax(1).detach()
    loss.backward()
    encoder_optimizer.step()
    decoder_optimizer.step()
    return loss.item() / float(hp.max_length)


encoder, decoder = Encoder(), Decoder()
encoder_optimizer = torch.optim.SGD(encoder.parameters(), lr=0.01)
decoder_optimizer = torch.optim.SGD(decoder.parameters(), lr=0.01)
criterion = nn.NLLLoss()
print_loss_total = 0
for it in range(1, 5):
    pair = (torch.randint(1, hp.n_words, (hp.max_length,)), torch.randint(1, hp.n_words, (hp.max_length,)))
    print_loss_total += train(pair[0], pair[1], encoder, decoder, encoder_optimizer, decoder_optimizer, criterion)
print("avg loss %.4f" % (print_loss_total / 4))
