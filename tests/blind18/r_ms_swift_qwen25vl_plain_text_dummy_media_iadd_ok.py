# Source: https://github.com/modelscope/ms-swift/issues/4613
"""ms-swift#4613: DeepSpeed fine-tuning of Qwen2.5-VL on pure-text data; the Qwen2.5-VL template's `_post_encode`
embeds the tokens, `inputs_embeds = ...embed_tokens(input_ids)`, and for a plain-text batch runs the vision tower
on a dummy 32x32 image and adds `inputs_embeds += image_embeds.mean() * 0.` to keep the visual graph connected.
On the reporter's Ascend NPU the embedding output came back as a leaf ("a leaf Variable that requires grad is being
used in an in-place operation"); on CUDA, as the reporter checked, and on CPU it is a non-leaf (EmbeddingBackward),
which torch 2.13 lets the in-place add write. Fixed as the reporter proposed: the out-of-place add,
`inputs_embeds = inputs_embeds + image_embeds.mean() * 0.`, which is right whatever the device makes of the
embedding output.
Tiny modules stand in for the Qwen2.5-VL language model and vision tower, random pixels for the image processor's
output, a flag for `is_deepspeed_enabled()`.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def is_deepspeed_enabled():
    return True


class VisionTower(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.patch = nn.Linear(3 * 14 * 14, hidden)

    def get_dtype(self):
        return self.patch.weight.dtype

    def forward(self, pixel_values, grid_thw=None):
        return self.patch(pixel_values)


class LanguageModel(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, hidden)
        self.layer = nn.Linear(hidden, hidden)

    def forward(self, inputs_embeds):
        return torch.tanh(self.layer(inputs_embeds))


class Qwen2_5VLForConditionalGeneration(nn.Module):
    def __init__(self, vocab=32, hidden=16):
        super().__init__()
        self.visual = VisionTower(hidden)
        self.model = nn.Module()
        self.model.language_model = LanguageModel(vocab, hidden)
        self.lm_head = nn.Linear(hidden, vocab)


class Qwen2_5VLTemplate:
    version = 'v2_5'

    def image_processor(self, n_patches=4):
        return {'pixel_values': torch.rand(n_patches, 3 * 14 * 14), 'image_grid_thw': torch.tensor([[1, 2, 2]])}

    def _post_encode(self, model, inputs):
        input_ids = inputs['input_ids']
        pixel_values = inputs.get('pixel_values')
        pixel_values_videos = inputs.get('pixel_values_videos')
        base_model = model
        if hasattr(base_model.model, 'embed_tokens'):
            inputs_embeds = base_model.model.embed_tokens(input_ids)
        else:
            inputs_embeds = base_model.model.language_model.embed_tokens(input_ids)

        dtype = model.visual.get_dtype()
        if pixel_values is None and pixel_values_videos is None:  # plain-text
            if is_deepspeed_enabled():
                media_inputs = self.image_processor()
                pixel_values = media_inputs['pixel_values'].type(dtype)
                image_embeds = model.visual(pixel_values, grid_thw=media_inputs['image_grid_thw'])
                inputs_embeds = inputs_embeds + image_embeds.mean() * 0.
        return {'inputs_embeds': inputs_embeds}


model = Qwen2_5VLForConditionalGeneration()
template = Qwen2_5VLTemplate()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(3):
    input_ids = torch.randint(0, 32, (2, 6))
    labels = torch.randint(0, 32, (2, 6))
    inputs_embeds = template._post_encode(model, {'input_ids': input_ids})['inputs_embeds']
    logits = model.lm_head(model.model.language_model(inputs_embeds))
    loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), labels.view(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
