# lmppl: the perplexity of an encoder-decoder LM on output texts given input texts. The scorer
# loads the model on the GPU when there is one (the meta device stands in for it), tokenizes a
# batch of inputs and targets, runs the model with the targets as labels and takes the token
# cross-entropy itself. A tiny embedding + GRU seq2seq and a whitespace tokenizer stand in for
# the Hugging Face model and tokenizer (perplexities are reported by shape on meta).
import torch
import torch.nn as nn

torch.manual_seed(0)
PAD_TOKEN_LABEL_ID = nn.CrossEntropyLoss().ignore_index
WORDS = "<pad> the a cat dog sat ran on mat fast slow is was big small".split()


class Tokenizer:
    pad_token_id = 0

    def __call__(self, texts, return_tensors="pt", padding=True, truncation=True):
        ids = [[WORDS.index(w) if w in WORDS else 1 for w in t.split()] for t in texts]
        width = max(len(i) for i in ids)
        input_ids = torch.tensor([i + [0] * (width - len(i)) for i in ids])
        return {"input_ids": input_ids, "attention_mask": (input_ids != 0).long()}


class Seq2SeqLM(nn.Module):
    def __init__(self, vocab_size=len(WORDS), dim=32):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.encoder = nn.GRU(dim, dim, batch_first=True)
        self.decoder = nn.GRU(dim, dim, batch_first=True)
        self.lm_head = nn.Linear(dim, vocab_size)

    def forward(self, input_ids, attention_mask, labels):
        _, h = self.encoder(self.embed(input_ids))
        dec_in = self.embed(labels.clamp(min=0))
        out, _ = self.decoder(dec_in, h)
        return {"logits": self.lm_head(out)}


class EncoderDecoderLM:
    def __init__(self, device=None):
        self.tokenizer = Tokenizer()
        self.model = Seq2SeqLM()
        self.vocab_size = len(WORDS)
        self.pad_token_id = self.tokenizer.pad_token_id
        self.device = device or torch.device("meta")  # "cuda" if torch.cuda.is_available() else "cpu"
        self.model.to(self.device)
        self.model.eval()
        self.loss_fct = nn.CrossEntropyLoss(reduction="none")

    def get_perplexity(self, input_texts, output_texts, batch=2):
        nll = []
        with torch.no_grad():
            for s in range(0, len(input_texts), batch):
                e = min(s + batch, len(input_texts))
                model_inputs = self.tokenizer(input_texts[s:e], return_tensors="pt", padding=True, truncation=True)
                output_encode = self.tokenizer(output_texts[s:e], return_tensors="pt", padding=True, truncation=True)
                model_inputs["labels"] = output_encode["input_ids"]
                output = self.model(**{k: v.to(self.device) for k, v in model_inputs.items()})
                label = output_encode["input_ids"]
                label[label == self.pad_token_id] = PAD_TOKEN_LABEL_ID
                loss = self.loss_fct(output["logits"].view(-1, self.vocab_size), label.view(-1))
                loss = loss.view(len(output["logits"]), -1)
                valid_length = (label != PAD_TOKEN_LABEL_ID).sum(dim=-1)
                nll.append(loss.sum(-1) / valid_length)
        return torch.exp(torch.cat(nll))


scorer = EncoderDecoderLM()
ppl = scorer.get_perplexity(
    input_texts=["the cat sat on the mat", "a dog ran", "the mat is big"],
    output_texts=["a cat sat", "the dog ran fast", "the mat was small"])
print(f"perplexities {tuple(ppl.shape)}")
