# Source: https://github.com/yashbonde/dall-e-baby/issues/1
"""dall-e-baby (yashbonde), discrete_vae.py: `VQVAE_v3.forward` uses
`F.gumbel_softmax(..., hard=True)` when `self.training`, and otherwise

    softmax = F.softmax(encoding, dim = 1)
    softmax = softmax.scatter_(1, torch.argmax(softmax, dim = 1).unsqueeze(1), 1)

("during testing we do not need the gradient"). `DiscreteVAETrainer.train` switches to
`model=model.eval()` every `test_every` steps to run the test set under `torch.no_grad()`, but
only switches back with `model=model.train()` inside `if gs and save_every and gs % save_every ==
0:`. After the first test the next training step therefore runs the eval branch *with* grad:
`scatter_` overwrites the softmax output that SoftmaxBackward saved, and `loss.backward()` raises
"one of the variables needed for gradient computation has been modified by an inplace operation"
(the issue: "Error detected in SoftmaxBackward", right after "[TEST - 0]" at "GS: 2").

Fix (in the _ok twin, as the repository later did): call `model.train()` after the test block on
every step, outside the checkpoint condition.

Stand-ins: random 16x16 images, tiny hidden sizes, `test_every=1`, no DataLoader workers, tqdm,
matplotlib sample grids, wandb or checkpoint files; the model classes and the train loop keep the
repository's code.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import einsum

WANDB = False


class ResidualLayer(nn.Module):
  def __init__(self, in_channels, out_channels):
    super(ResidualLayer, self).__init__()
    self.resblock = nn.Sequential(
        nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=False),
        nn.BatchNorm2d(out_channels),
        nn.LeakyReLU(inplace=True),
        nn.Conv2d(out_channels, out_channels, kernel_size=1, bias=False),
        nn.BatchNorm2d(out_channels),
    )

  def forward(self, input):
    return input + self.resblock(input)


class QuickGELU(nn.Module):
  def forward(self, x):
    return x * torch.sigmoid(1.702 * x)


class VQVAE_Encoder_v2(nn.Module):
  def __init__(self, in_channels, hidden_dims, num_embeddings, add_residual=True, **kwargs):
    super().__init__()
    modules = []
    for h_dim in hidden_dims:
      modules.append(nn.Sequential(
        nn.Conv2d(in_channels, out_channels=h_dim, kernel_size=4, stride=2, padding=1),
        nn.BatchNorm2d(h_dim),
        QuickGELU()
      ))
      in_channels = h_dim
      if add_residual:
        modules.append(ResidualLayer(in_channels, in_channels))
        modules.append(QuickGELU())
    modules.append(nn.Sequential(nn.Conv2d(in_channels, num_embeddings, kernel_size=1, stride=1)))
    self.encoder = nn.Sequential(*modules)

  def forward(self, x):
    return self.encoder(x)


class VQVAE_Decoder_v2(nn.Module):
  def __init__(self, embedding_dim, hidden_dims, out_channels, add_residual=True, **kwargs):
    super().__init__()
    modules = []
    modules.append(nn.Sequential(
      nn.ConvTranspose2d(embedding_dim, hidden_dims[-1], kernel_size=3, stride=1, padding=1),
      nn.BatchNorm2d(hidden_dims[-1]),
      QuickGELU()
    ))
    hidden_dims.reverse()
    hidden_dims = hidden_dims + [out_channels]
    last = len(hidden_dims) - 1
    for i in range(last):
      if add_residual:
        modules.append(ResidualLayer(hidden_dims[i], hidden_dims[i]))
        modules.append(QuickGELU())
      if i != last-1:
        modules.append(nn.Sequential(
          nn.ConvTranspose2d(hidden_dims[i], hidden_dims[i + 1], kernel_size=4, stride=2, padding=1),
          nn.BatchNorm2d(hidden_dims[i + 1]),
          QuickGELU()
        ))
      else:
        modules.append(nn.Sequential(
          nn.ConvTranspose2d(hidden_dims[i], hidden_dims[i + 1], kernel_size=4, stride=2, padding=1),
          nn.Tanh()
        ))
    self.decoder = nn.Sequential(*modules)

  def forward(self, x):
    return self.decoder(x)


class VQVAE_v3(nn.Module):
  def __init__(self, in_channels, embedding_dim, num_embeddings, hidden_dims=[128, 256], add_residual=True, **kwargs):
    super().__init__()
    self.embedding_dim=embedding_dim
    self.num_embeddings=num_embeddings
    self.encoder = VQVAE_Encoder_v2(in_channels=in_channels, hidden_dims=hidden_dims, embedding_dim=embedding_dim,
                                    num_embeddings=num_embeddings, add_residual=add_residual)
    self.codebook = nn.Embedding(num_embeddings, embedding_dim)
    self.decoder = VQVAE_Decoder_v2(embedding_dim=embedding_dim, hidden_dims=hidden_dims, out_channels=in_channels,
                                    add_residual=add_residual)

  def forward(self, input, v=False):
    encoding=self.encoder(input)
    if self.training:
      softmax = F.gumbel_softmax(encoding, tau = 1., hard = True, dim = 1)
    else:
      # during testing we can ignore this added noise and go for standard softmax
      softmax = F.softmax(encoding, dim = 1)
      # since we know that during testing we do not need the gradient we can get away with it.
      softmax = softmax.scatter_(1, torch.argmax(softmax, dim = 1).unsqueeze(1), 1)
    encoding_ids = torch.argmax(softmax, dim = 1).view(encoding.size(0), -1)
    quantized_inputs = einsum("bdhw,dn->bnhw", softmax, self.codebook.weight)
    recons=self.decoder(quantized_inputs)
    recons_loss=F.mse_loss(recons, input)
    loss = recons_loss
    return encoding_ids, loss, recons


class DiscreteVAETrainer:
  def __init__(self, model, train, test=None):
    self.model=model
    self.train_dataset=train
    self.test_dataset=test
    self.device="cpu"

  def train(self, bs, n_epochs, lr, folder_path, skip_steps, test_every=500, test_batch_size=None,
            save_every=None, **kwargs):
    model=self.model
    train_data=self.train_dataset
    test_data=self.test_dataset
    epoch_step=len(train_data) // bs + int(len(train_data) % bs != 0)
    optim=torch.optim.Adam(model.parameters(), lr=lr)
    gs=0
    train_losses=[-1]
    model.train()
    do_skip = True
    for epoch in range(n_epochs):
      dl=[train_data[i:i + bs] for i in range(0, len(train_data), bs)]
      pbar=range(epoch_step)
      for d, loop_idx in zip(dl, pbar):
        if skip_steps and loop_idx < skip_steps and do_skip:
          continue
        do_skip = False

        # train the model
        d=d.to(self.device)
        print(f"[TRAIN - {epoch}] GS: {gs}, Loss: {round(train_losses[-1], 5)}")
        _, loss, _=model(d)
        loss=loss.mean() # gather from multiple GPUs

        # gradient clipping
        optim.zero_grad()
        loss.backward()  # expect: GG103
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.5)
        optim.step()
        gs += 1
        train_losses.append(loss.item())

        # ----- test condition
        if test_data != None and gs and gs % test_every == 0:
          print(":: Entering Testing Mode")
          if test_batch_size is None:
            test_batch_size = bs * 4
          dl_test=[test_data[i:i + test_batch_size] for i in range(0, len(test_data), test_batch_size)]
          model=model.eval() # convert model to testing mode
          test_loss=[]
          for d in dl_test:
            d=d.to(self.device)
            with torch.no_grad():
              _, loss, output_img=model(d)
            loss=loss.mean() # gather from multiple GPUs
            test_loss.append(loss.item())
          test_loss=np.mean(test_loss)
          print(":::: Loss:", test_loss)

        if gs and save_every and gs % save_every == 0:
          print(f"Saving Model at {folder_path}/vae_{gs}.pt (skipped)")
          model=model.train()  # convert model back to training mode

    print("EndSave")


if __name__ == "__main__":
  torch.manual_seed(0)
  train = torch.rand(8, 3, 16, 16) * 2 - 1
  test = torch.rand(4, 3, 16, 16) * 2 - 1
  model = VQVAE_v3(in_channels=3, embedding_dim=8, num_embeddings=16, hidden_dims=[8, 16])
  trainer = DiscreteVAETrainer(model, train, test)
  trainer.train(bs=2, n_epochs=1, lr=1e-3, folder_path="./", skip_steps=0, test_every=1, test_batch_size=4)
