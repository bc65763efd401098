# A small GPT-style language model: token embedding, a sinusoidal positional encoding computed with
# numpy once in __init__, a decoder stack and an LM head; the model is moved to get_device() (the
# GPU in the original code, the meta device stands in for it here) and trained on token batches.
import numpy as np
import torch

torch.manual_seed(0)


def get_device():
    return torch.device("meta")  # 'cuda' if torch.cuda.is_available() else 'cpu' in the original


class TokenEmbedding(torch.nn.Module):
    def __init__(self, embedding_dimension, number_of_tokens):
        super().__init__()
        self.embedding_layer = torch.nn.Embedding(number_of_tokens, embedding_dimension)

    def forward(self, x):
        return self.embedding_layer(x)


class PositionalEncoding(torch.nn.Module):
    def __init__(self, embedding_dimension, max_sequence_length):
        super().__init__()
        self.embedding_dimension = embedding_dimension
        self.max_sequence_length = max_sequence_length
        self.positional_encoding = self.create_positional_encoding()

    def create_positional_encoding(self):
        positional_encoding = np.zeros((self.max_sequence_length, self.embedding_dimension))
        for pos in range(self.max_sequence_length):
            for i in range(0, self.embedding_dimension, 2):
                positional_encoding[pos, i] = np.sin(pos / (10000 ** ((2 * i) / self.embedding_dimension)))
                positional_encoding[pos, i + 1] = np.cos(pos / (10000 ** ((2 * (i + 1)) / self.embedding_dimension)))
        return torch.from_numpy(positional_encoding).float()

    def forward(self, x):
        return x + self.positional_encoding[:x.size(1), :]


class DecoderLayer(torch.nn.Module):
    def __init__(self, embedding_dimension, number_of_heads, feed_forward_dimension, dropout_rate):
        super().__init__()
        self.attention = torch.nn.MultiheadAttention(embedding_dimension, number_of_heads, batch_first=True)
        self.feed_forward = torch.nn.Sequential(torch.nn.Linear(embedding_dimension, feed_forward_dimension), torch.nn.ReLU(),
                                                torch.nn.Linear(feed_forward_dimension, embedding_dimension))
        self.dropout = torch.nn.Dropout(dropout_rate)
        self.layer_normalization_1 = torch.nn.LayerNorm(embedding_dimension)
        self.layer_normalization_2 = torch.nn.LayerNorm(embedding_dimension)

    def forward(self, x):
        normalized_x = self.layer_normalization_1(x)
        residual_output = x + self.attention(normalized_x, normalized_x, normalized_x, need_weights=False)[0]
        return residual_output + self.dropout(self.feed_forward(self.layer_normalization_2(residual_output)))


class LanguageModel(torch.nn.Module):
    def __init__(self, number_of_tokens, max_sequence_length=32, embedding_dimension=16, number_of_layers=2,
                 number_of_heads=4, dropout_rate=0.1):
        super().__init__()
        self.token_embedding = TokenEmbedding(embedding_dimension, number_of_tokens)
        self.positional_encoding = PositionalEncoding(embedding_dimension, max_sequence_length)
        self.layer_normalization = torch.nn.LayerNorm(embedding_dimension)
        self.decoder = torch.nn.ModuleList([DecoderLayer(embedding_dimension, number_of_heads, 4 * embedding_dimension, dropout_rate)
                                            for _ in range(number_of_layers)])
        self.lm_head = torch.nn.Linear(embedding_dimension, number_of_tokens)

    def forward(self, x):
        h = self.layer_normalization(self.positional_encoding(self.token_embedding(x)))
        for layer in self.decoder:
            h = layer(h)
        return self.lm_head(h)


number_of_tokens = 50
model = LanguageModel(number_of_tokens).to(get_device())
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
loss_function = torch.nn.CrossEntropyLoss()
for step in range(3):
    tokens = torch.randint(0, number_of_tokens, (4, 17)).to(get_device())
    logits = model(tokens[:, :-1])
    loss = loss_function(logits.reshape(-1, number_of_tokens), tokens[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.shape, loss.device)
