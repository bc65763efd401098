# A custom Predictor for a text classifier, built directly from its constructor with the freshly
# trained model and a dataset reader (instead of being loaded from an archive).
import torch
import torch.nn as nn

torch.manual_seed(0)


class DatasetReader:
    def __init__(self, vocab):
        self.vocab = vocab

    def text_to_instance(self, sentence):
        return {"tokens": torch.tensor([[self.vocab.get(w, 1) for w in sentence.split()]])}


class TextClassifier(nn.Module):
    def __init__(self, vocab_size, num_labels=3):
        super().__init__()
        self.embedder = nn.EmbeddingBag(vocab_size, 32)
        self.dropout = nn.Dropout(0.5)
        self.classifier = nn.Linear(32, num_labels)

    def forward(self, tokens, label=None):
        logits = self.classifier(self.dropout(self.embedder(tokens)))
        output = {"probs": logits.softmax(-1)}
        if label is not None:
            output["loss"] = nn.functional.cross_entropy(logits, label)
        return output

    def forward_on_instance(self, instance):
        with torch.no_grad():
            return {k: v[0] for k, v in self(**instance).items()}


class Predictor:
    def __init__(self, model, dataset_reader):
        self._model = model
        self._dataset_reader = dataset_reader

    def predict_instance(self, instance):
        return self._model.forward_on_instance(instance)

    def predict_json(self, inputs):
        return self.predict_instance(self._json_to_instance(inputs))


class MyPredictor(Predictor):
    def __init__(self, model, dataset_reader):
        super().__init__(model.eval(), dataset_reader)

    def _json_to_instance(self, json_dict):
        return self._dataset_reader.text_to_instance(json_dict["sentence"])


words = "the movie was great terrible fine plot acting boring fun".split()
vocab = {w: i + 2 for i, w in enumerate(words)}
model = TextClassifier(len(vocab) + 2)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
model.train()
for step in range(20):
    tokens = torch.randint(2, len(vocab) + 2, (8, 5))
    loss = model(tokens, label=tokens[:, 0] % 3)["loss"]
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

predictor = MyPredictor(model, DatasetReader(vocab))
first = predictor.predict_json({"sentence": "the acting was great fun"})
second = predictor.predict_json({"sentence": "the acting was great fun"})
print(first["probs"], second["probs"])

# -- corpus check --
if not torch.allclose(first["probs"], second["probs"]):
    print("BUG: the predictor gives different probabilities for the same sentence (dropout active)")
