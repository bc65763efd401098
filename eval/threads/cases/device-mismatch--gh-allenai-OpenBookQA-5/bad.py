# Evaluation command of a multiple-choice QA model (AllenNLP style): evaluate_from_args loads the
# model, puts it on the requested GPU (the meta device stands in for it here) and calls evaluate,
# which runs the model over the batches of the iterator and collects the predictions.
import argparse

import torch
import torch.nn as nn

torch.manual_seed(0)


def move_to_device(obj, cuda_device):
    if isinstance(obj, torch.Tensor):
        return obj.to(cuda_device)
    if isinstance(obj, dict):
        return {key: move_to_device(value, cuda_device) for key, value in obj.items()}
    return obj


class QAMultiChoice(nn.Module):
    def __init__(self, vocab_size=200, dim=32):
        super().__init__()
        self.embedder = nn.EmbeddingBag(vocab_size, dim)
        self.scorer = nn.Bilinear(dim, dim, 1)

    def forward(self, question, choices, label=None):
        batch_size, num_choices, choice_len = choices.shape
        q = self.embedder(question)
        c = self.embedder(choices.view(-1, choice_len)).view(batch_size, num_choices, -1)
        logits = self.scorer(q.unsqueeze(1).expand_as(c).contiguous(), c).squeeze(-1)
        output = {"label_logits": logits, "label_probs": logits.softmax(-1)}
        if label is not None:
            output["loss"] = nn.functional.cross_entropy(logits, label)
        return output


def batch_iterator(dataset, batch_size):
    for start in range(0, dataset["question"].size(0), batch_size):
        yield {key: value[start:start + batch_size] for key, value in dataset.items()}


def evaluate(model, dataset, batch_size):
    model.eval()
    predictions = []
    with torch.no_grad():
        for batch in batch_iterator(dataset, batch_size):
            output_dict = model(**batch)
            predictions.append(output_dict["label_probs"].argmax(-1))
    return torch.cat(predictions)


def evaluate_from_args(args):
    model = QAMultiChoice()
    model = model.to(args.cuda_device)
    dataset = {"question": torch.randint(0, 200, (10, 12)),
               "choices": torch.randint(0, 200, (10, 4, 6)),
               "label": torch.randint(0, 4, (10,))}
    return evaluate(model, dataset, batch_size=4)


args = argparse.Namespace(cuda_device=torch.device("meta"))
predictions = evaluate_from_args(args)
print("predictions", tuple(predictions.shape), predictions.device)
