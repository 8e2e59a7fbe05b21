# Source: https://github.com/google/inspiration_tree/issues/25
"""google/inspiration_tree #25: loading the learned concept tokens into a Stable Diffusion pipeline
("(2) Load the learned nodes" in the playground notebook; ``utils.load_tokens``, used by
``save_rev_samples``) fails with "a view of a leaf Variable that requires grad is being used in an
in-place operation".

``load_tokens`` adds the new tokens to the tokenizer, resizes the text encoder's token
embedding, then writes each learned vector into its row:
``pipe.text_encoder.text_model.embeddings.token_embedding.weight[ref_indx] = embd_cur``.  The
embedding weight is an ``nn.Parameter`` (a leaf that requires grad -- ``from_pretrained`` and
``resize_token_embeddings`` leave it trainable) and the assignment runs with grad mode on, so
the in-place copy into a view of it raises.  Fix from the thread (LeonJoe13 / the reporter): wrap
the body of ``load_tokens`` in ``with torch.no_grad():``.

Stand-ins: a minimal ``StableDiffusionPipeline`` (float16 CLIP-like text encoder with
transformers' ``resize_token_embeddings`` semantics, a word-level tokenizer, a toy denoiser that
turns text embeddings into "images"), ``torch.load`` of the learned embeddings replaced by random
vectors, and matplotlib replaced by no-ops; 4 images per prompt, 2 seeds, 3 denoising steps.
"""
import numpy as np
import torch
import torch.nn as nn


# ---- stand-ins for transformers / diffusers ----
class CLIPTokenizer:
    def __init__(self, words):
        self.vocab = {w: i for i, w in enumerate(words)}

    def add_tokens(self, tokens):
        added = 0
        for t in tokens:
            if t not in self.vocab:
                self.vocab[t] = len(self.vocab)
                added += 1
        return added

    def __len__(self):
        return len(self.vocab)

    def tokenize(self, text):
        return text.split()

    def convert_tokens_to_ids(self, tokens):
        return [self.vocab.get(t, 0) for t in tokens]

    def __call__(self, prompts, max_length=8):
        ids = []
        for p in prompts:
            row = self.convert_tokens_to_ids(self.tokenize(p))[:max_length]
            ids.append(row + [0] * (max_length - len(row)))
        return torch.tensor(ids)


class CLIPTextEmbeddings(nn.Module):
    def __init__(self, vocab_size, dim, max_len=8):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab_size, dim)
        self.position_embedding = nn.Embedding(max_len, dim)

    def forward(self, input_ids):
        pos = torch.arange(input_ids.shape[1])
        return self.token_embedding(input_ids) + self.position_embedding(pos)


class CLIPTextTransformer(nn.Module):
    def __init__(self, vocab_size, dim):
        super().__init__()
        self.embeddings = CLIPTextEmbeddings(vocab_size, dim)
        self.encoder = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))

    def forward(self, input_ids):
        return self.encoder(self.embeddings(input_ids))


class CLIPTextModel(nn.Module):
    def __init__(self, vocab_size, dim):
        super().__init__()
        self.text_model = CLIPTextTransformer(vocab_size, dim)

    def resize_token_embeddings(self, new_num_tokens):
        old = self.text_model.embeddings.token_embedding
        new = nn.Embedding(new_num_tokens, old.embedding_dim).to(old.weight.dtype)
        n = min(old.num_embeddings, new_num_tokens)
        new.weight.data[:n, :] = old.weight.data[:n, :]
        self.text_model.embeddings.token_embedding = new
        return new

    def forward(self, input_ids):
        return (self.text_model(input_ids),)


class _Output:
    def __init__(self, images):
        self.images = images


class StableDiffusionPipeline(nn.Module):
    def __init__(self, tokenizer, text_encoder, dim):
        super().__init__()
        self.tokenizer = tokenizer
        self.text_encoder = text_encoder
        self.unet = nn.Linear(dim, 3 * 8 * 8).to(torch.float16)

    @classmethod
    def from_pretrained(cls, model_id, torch_dtype=torch.float32, safety_checker=None, requires_safety_checker=True):
        torch.manual_seed(0)
        words = ["<pad>", "a", "photo", "of", "the", "object"]
        tokenizer = CLIPTokenizer(words)
        text_encoder = CLIPTextModel(len(words), 32).to(torch_dtype)
        return cls(tokenizer, text_encoder, 32)

    def __call__(self, prompt, num_inference_steps=3, guidance_scale=7.5):
        ids = self.tokenizer(prompt)
        cond = self.text_encoder(ids)[0].mean(dim=1)
        latents = torch.randn(len(prompt), 3 * 8 * 8, dtype=torch.float16)
        for _ in range(num_inference_steps):
            latents = latents - 0.1 * (latents - self.unet(cond))
        imgs = ((latents.float().clamp(-1, 1) + 1) * 127.5).to(torch.uint8).view(len(prompt), 8, 8, 3)
        return _Output([img.numpy() for img in imgs])


class _Pyplot:
    def __getattr__(self, name):
        return lambda *args, **kwargs: None


plt = _Pyplot()


# ---- inspiration_tree utils.py ----
def load_tokens(pipe, data, device):
    """
    Adds the new learned tokens into the predefined dictionary of pipe.
    """
    added_tokens = []
    for t_ in data.keys():
        added_tokens.append(t_)
    num_added_tokens = pipe.tokenizer.add_tokens(added_tokens)
    pipe.text_encoder.resize_token_embeddings(len(pipe.tokenizer))
    for token_ in data.keys():
        ref_token = pipe.tokenizer.tokenize(token_)
        ref_indx = pipe.tokenizer.convert_tokens_to_ids(ref_token)[0]
        embd_cur = data[token_].to(device).to(dtype=torch.float16)
        pipe.text_encoder.text_model.embeddings.token_embedding.weight[ref_indx] = embd_cur  # expect: GG108


def save_rev_samples(output_path, data, model_id, device):
    prompts_title = ["Vl", "Vr", "Vl Vr"]
    prompt_to_vec = {}
    combined = []
    prompts = []
    for w_ in data.keys():
        prompt_to_vec[w_] = data[w_]
        combined.append(w_)
        prompts.append(w_)
    prompts.append(" ".join(combined))

    pipe = StableDiffusionPipeline.from_pretrained(model_id, torch_dtype=torch.float16, safety_checker=None, requires_safety_checker=False).to(device)
    load_tokens(pipe, prompt_to_vec, device)

    print("Prompts loaded to pipe ...")
    print(prompt_to_vec.keys())

    gen_seeds = [4321, 95]
    num_images_per_seed = 4

    plt.figure(figsize=(20, 20))
    for i in range(len(prompts)):
        images_per_seed = []
        for gen_seed in gen_seeds:
            with torch.no_grad():
                torch.manual_seed(gen_seed)
                images = pipe(prompt=[prompts[i]] * num_images_per_seed, num_inference_steps=3, guidance_scale=7.5).images
            images_per_seed.extend(images)

        # plot results
        plot_stacked = []
        for j in range(int(len(images_per_seed) / 4)):
            images_staked_h = np.hstack([np.asarray(img) for img in images_per_seed[j * 4:j * 4 + 4]])
            plot_stacked.append(images_staked_h)
        im_stack = np.vstack(plot_stacked)
        plt.subplot(1, len(prompts), i + 1)
        plt.imshow(im_stack)
        plt.axis("off")
        plt.title(prompts_title[i], size=24)
        print(prompts[i], im_stack.shape)


# the learned node tokens (stands for torch.load("learned_tokens/paper_tokens.bin")[...])
torch.manual_seed(1)
data = {"<*v_l>": torch.randn(32), "<*v_r>": torch.randn(32)}
save_rev_samples("outputs/cat_sculpture/v0", data, "runwayml/stable-diffusion-v1-5", "cpu")
