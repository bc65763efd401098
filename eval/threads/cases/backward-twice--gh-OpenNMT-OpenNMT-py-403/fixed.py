# OpenNMT-style truncated BPTT: the target is cut into chunks of trunc_size steps; the decoder
# state object carries the hidden state and the input feed from one chunk to the next, and its
# detach() method is called after each chunk's backward.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class RNNDecoderState(object):
    def __init__(self, hidden, input_feed):
        self.hidden = hidden
        self.input_feed = input_feed

    @property
    def _all(self):
        return self.hidden + (self.input_feed,)

    def detach(self):
        self.hidden = tuple([_.detach() for _ in self.hidden])
        self.input_feed = self.input_feed.detach()


class InputFeedDecoder(nn.Module):
    def __init__(self, vocab, emb, hidden):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, emb)
        self.rnn = nn.LSTMCell(emb + hidden, hidden)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, tgt, state):
        h, c = state.hidden
        feed = state.input_feed
        logits = []
        for emb_t in self.embeddings(tgt):
            h, c = self.rnn(torch.cat([emb_t, feed], dim=1), (h, c))
            feed = torch.tanh(h)
            logits.append(self.out(feed))
        return torch.stack(logits), RNNDecoderState((h, c), feed)


def train_batch(decoder, optim, tgt, trunc_size, hidden_size):
    batch = tgt.shape[1]
    dec_state = RNNDecoderState((torch.zeros(batch, hidden_size), torch.zeros(batch, hidden_size)),
                                torch.zeros(batch, hidden_size))
    for j in range(0, tgt.shape[0] - 1, trunc_size):
        tgt_in = tgt[j:j + trunc_size]
        tgt_out = tgt[j + 1:j + 1 + trunc_size]
        tgt_in = tgt_in[:tgt_out.shape[0]]
        optim.zero_grad()
        logits, dec_state = decoder(tgt_in, dec_state)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
        loss.backward()
        optim.step()
        dec_state.detach()
        print(f"chunk {j // trunc_size} loss {loss.item():.4f}")


decoder = InputFeedDecoder(vocab=30, emb=8, hidden=16)
optim = torch.optim.SGD(decoder.parameters(), lr=0.1)
train_batch(decoder, optim, torch.randint(0, 30, (13, 4)), trunc_size=4, hidden_size=16)
