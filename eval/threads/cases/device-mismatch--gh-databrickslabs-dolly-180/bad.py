# An instruction-following text generation pipeline in the style of a Hugging Face Pipeline:
# preprocess() formats the prompt and tokenizes it into CPU tensors, _forward() calls the model's
# generate() with the input ids and attention mask, postprocess() reads the generated ids. The
# causal LM is on the GPU (the meta device stands in for it here); a tiny embedding + GRU language
# model and a character tokenizer stand in for the pretrained model, and the output is reported by
# shape (meta tensors hold no values).
import torch
import torch.nn as nn

torch.manual_seed(0)
device = torch.device("meta")  # the model was loaded with device_map="auto" onto the GPU

PROMPT_FOR_GENERATION_FORMAT = "### Instruction:\n{instruction}\n\n### Response:\n"


class CharTokenizer:
    pad_token_id = 0

    def __call__(self, text, return_tensors="pt"):
        ids = torch.tensor([[min(ord(c), 255) for c in text]])
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}


class TinyCausalLM(nn.Module):
    def __init__(self, vocab=256, hidden=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.rnn = nn.GRU(hidden, hidden, batch_first=True)
        self.lm_head = nn.Linear(hidden, vocab)

    @property
    def device(self):
        return next(self.parameters()).device

    def forward(self, input_ids, attention_mask):
        h = self.embed(input_ids) * attention_mask.unsqueeze(-1)
        out, _ = self.rnn(h)
        return self.lm_head(out)

    @torch.no_grad()
    def generate(self, input_ids, attention_mask, pad_token_id, max_new_tokens=4):
        for _ in range(max_new_tokens):
            logits = self(input_ids, attention_mask)
            next_id = logits[:, -1].argmax(dim=-1, keepdim=True)
            input_ids = torch.cat([input_ids, next_id], dim=1)
            attention_mask = torch.cat([attention_mask, torch.ones_like(next_id)], dim=1)
        return input_ids


class InstructionTextGenerationPipeline:
    def __init__(self, model, tokenizer, max_new_tokens=4):
        self.model = model
        self.tokenizer = tokenizer
        self.max_new_tokens = max_new_tokens

    def preprocess(self, instruction_text):
        prompt_text = PROMPT_FOR_GENERATION_FORMAT.format(instruction=instruction_text)
        inputs = self.tokenizer(prompt_text, return_tensors="pt")
        inputs["instruction_text"] = instruction_text
        return inputs

    def _forward(self, model_inputs):
        input_ids = model_inputs["input_ids"]
        attention_mask = model_inputs.get("attention_mask", None)
        generated_sequence = self.model.generate(
            input_ids=input_ids.to(self.model.device),
            attention_mask=attention_mask,
            pad_token_id=self.tokenizer.pad_token_id,
            max_new_tokens=self.max_new_tokens,
        )
        return {"generated_sequence": generated_sequence, "instruction_text": model_inputs["instruction_text"]}

    def postprocess(self, model_outputs):
        sequence = model_outputs["generated_sequence"]
        return [{"generated_text": f"<{sequence.shape[1]} ids on {sequence.device.type}>"}]

    def __call__(self, instruction_text):
        return self.postprocess(self._forward(self.preprocess(instruction_text)))


model = TinyCausalLM().to(device)
pipeline = InstructionTextGenerationPipeline(model=model, tokenizer=CharTokenizer())
print(pipeline("Explain to me the difference between nuclear fission and fusion.")[0]["generated_text"])
