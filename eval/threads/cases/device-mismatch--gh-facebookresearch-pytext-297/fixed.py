# A pytext-style document classifier: word embedding -> BiLSTM representation -> max pool -> decoder.
# The BiLSTM sends a zero initial state that matches the batch size when no states are passed in.
# CUDA_ENABLED picks the device for the whole model (the GPU in the original, the meta device stands
# in for it here).
from typing import Optional, Tuple

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

torch.manual_seed(0)
CUDA_ENABLED = True
DEVICE = torch.device("meta") if CUDA_ENABLED else torch.device("cpu")


class BiLSTMConfig:
    dropout: float = 0.4
    lstm_dim: int = 16
    num_layers: int = 1
    bidirectional: bool = True


class BiLSTM(nn.Module):
    def __init__(self, config: BiLSTMConfig, embed_dim: int, padding_value: float = 0.0) -> None:
        super().__init__()
        self.config = config
        self.padding_value = padding_value
        self.dropout = nn.Dropout(config.dropout)
        self.lstm = nn.LSTM(embed_dim, config.lstm_dim, num_layers=config.num_layers,
                            bidirectional=config.bidirectional)
        self.representation_dim = config.lstm_dim * (2 if config.bidirectional else 1)

    def forward(self, embedded_tokens: torch.Tensor, seq_lengths: torch.Tensor,
                states: Optional[Tuple[torch.Tensor, torch.Tensor]] = None):
        embedded_tokens = self.dropout(embedded_tokens)
        if states is not None:
            states = (states[0].transpose(0, 1).contiguous(), states[1].transpose(0, 1).contiguous())
        else:
            # a zero state that matches the batch size, so that tracing does not fix the batch size
            state = torch.zeros(
                self.config.num_layers * (2 if self.config.bidirectional else 1),
                seq_lengths.size(0),
                self.config.lstm_dim,
                device=DEVICE if CUDA_ENABLED else None,
            )
            states = (state, state)
        rnn_input = pack_padded_sequence(embedded_tokens, seq_lengths, batch_first=True)
        rep, new_state = self.lstm(rnn_input, states)
        rep, _ = pad_packed_sequence(rep, padding_value=self.padding_value, batch_first=True,
                                     total_length=embedded_tokens.size(1))
        return rep, (new_state[0].transpose(0, 1), new_state[1].transpose(0, 1))


class DocModel(nn.Module):
    def __init__(self, vocab_size=50, embed_dim=12, num_labels=3):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim)
        self.representation = BiLSTM(BiLSTMConfig(), embed_dim)
        self.decoder = nn.Linear(self.representation.representation_dim, num_labels)

    def forward(self, tokens, seq_lengths):
        rep, _ = self.representation(self.embedding(tokens), seq_lengths)
        return self.decoder(rep.max(dim=1).values)


model = DocModel().to(DEVICE)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
for step in range(2):
    tokens = torch.randint(1, 50, (4, 7)).to(DEVICE)
    seq_lengths = torch.tensor([7, 6, 4, 2])  # lengths stay on the CPU for pack_padded_sequence
    labels = torch.randint(0, 3, (4,)).to(DEVICE)
    loss = nn.functional.cross_entropy(model(tokens, seq_lengths), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.shape, loss.device)
