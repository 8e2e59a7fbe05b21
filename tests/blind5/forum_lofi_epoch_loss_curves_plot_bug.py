# Source: https://github.com/jacbz/Lofi/issues/14
"""Lofi's training script (model/train.py, `python lofi2lofi_train.py` on CPU): each batch's
chord/melody/KL losses are appended as tensors, the epoch averages `sum(losses) / len(losses)`
keep the graph, and the epoch-end plotting hands those lists to matplotlib, which converts them with
NumPy: "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
(the reporter's traceback ends in `axs[0, 0].plot(epochs, train_losses_chords, ...)`). The
training loop is Lofi's (compute_loss with its masks and `reduction='none'` cross-entropies,
validation under no_grad); a small VAE with GRU decoders stands in for the lofi2lofi model, random
songs for the dataset, and `Axes.plot` below for matplotlib (it converts the series with
np.asarray, as matplotlib does); checkpoint saving is left out (no files written)."""
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

TRAIN_VALIDATION_SPLIT = 0.75
BATCH_SIZE = 4
LEARNING_RATE = 1e-3
WEIGHT_DECAY = 0.1
NOTES_PER_CHORD = 2
MELODY_EPOCH_DELAY = 1
TEACHER_FORCE = False
CHORD_VOCAB, NOTE_VOCAB, KEYS, MODES = 10, 12, 4, 2
MAX_EPOCHS = 2


class Axes:
    """Stand-in for a matplotlib Axes: plot() converts its data with NumPy."""

    def plot(self, x, y, **kwargs):
        return np.asarray(x, dtype=float), np.asarray(y, dtype=float)  # expect: GG107


class Songs(Dataset):
    def __init__(self, n, max_chords=6):
        self.items = []
        for _ in range(n):
            num_chords = int(torch.randint(3, max_chords, ()))
            self.items.append({
                "num_chords": torch.tensor(num_chords),
                "chords": torch.randint(0, CHORD_VOCAB, (max_chords,)),
                "melody_notes": torch.randint(0, NOTE_VOCAB, (max_chords * NOTES_PER_CHORD,)),
                "tempo": torch.rand(()), "key": torch.randint(0, KEYS, ()), "mode": torch.randint(0, MODES, ()),
                "valence": torch.rand(()), "energy": torch.rand(()),
            })

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


class Decoder(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.chord_rnn = nn.GRU(hidden, hidden, batch_first=True)
        self.chord_out = nn.Linear(hidden, CHORD_VOCAB)
        self.note_out = nn.Linear(hidden, NOTE_VOCAB)
        self.heads = nn.Linear(hidden, 1 + KEYS + MODES + 2)

    def forward(self, z, max_num_chords):
        h, _ = self.chord_rnn(z.unsqueeze(1).repeat(1, max_num_chords, 1))
        notes = self.note_out(h.repeat_interleave(NOTES_PER_CHORD, dim=1))
        heads = self.heads(z)
        tempo, key, mode, valence, energy = heads.split([1, KEYS, MODES, 1, 1], dim=1)
        return self.chord_out(h), notes, tempo, key, mode, valence, energy


class Lofi2Lofi(nn.Module):
    def __init__(self, hidden=16):
        super().__init__()
        self.embed = nn.Embedding(CHORD_VOCAB, hidden)
        self.encoder = nn.GRU(hidden, hidden, batch_first=True)
        self.mu = nn.Linear(hidden, hidden)
        self.logvar = nn.Linear(hidden, hidden)
        self.decoder = Decoder(hidden)

    def forward(self, chords, notes, tempo, key, mode, valence, energy, num_chords, max_num_chords,
                sampling_rate_chords, sampling_rate_melodies):
        _, h = self.encoder(self.embed(chords))
        mu, logvar = self.mu(h[0]), self.logvar(h[0])
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        kl = -0.5 * torch.mean(1 + logvar - mu.pow(2) - logvar.exp())
        return (*self.decoder(z, max_num_chords), kl)


def train(dataset, model, name):
    device = "cpu"
    print(f"Using {device} device")

    train_size = int(TRAIN_VALIDATION_SPLIT * len(dataset))
    val_size = len(dataset) - train_size
    train_dataset, val_dataset = torch.utils.data.random_split(dataset, [train_size, val_size])
    train_dataloader = DataLoader(train_dataset, batch_size=BATCH_SIZE, shuffle=True)
    val_dataloader = DataLoader(val_dataset, batch_size=BATCH_SIZE, shuffle=False)

    ce_loss = nn.CrossEntropyLoss(reduction='none')
    l1_loss = nn.L1Loss(reduction='mean')

    model = model.to(device)

    optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE, weight_decay=WEIGHT_DECAY)

    epochs = []
    train_losses_chords, train_losses_melodies, train_losses_kl = [], [], []
    val_losses_chords, val_losses_melodies, val_losses_kl = [], [], []

    # losses for one batch of data
    def compute_loss(data):
        num_chords = data["num_chords"]
        max_num_chords = num_chords.max()
        max_num_notes = max_num_chords * NOTES_PER_CHORD

        chords_gt = data["chords"].to(device)[:, :max_num_chords]
        notes_gt = data["melody_notes"].to(device)[:, :max_num_notes]
        tempo_gt = data["tempo"].to(device)
        key_gt = data["key"].to(device)
        mode_gt = data["mode"].to(device)
        valence_gt = data["valence"].to(device)
        energy_gt = data["energy"].to(device)

        pred_chords, pred_notes, pred_tempo, pred_key, pred_mode, pred_valence, pred_energy, kl = \
            model(chords_gt, notes_gt, tempo_gt, key_gt, mode_gt, valence_gt, energy_gt, num_chords, int(max_num_chords),
                  sampling_rate_chords, sampling_rate_melodies)

        # compute a boolean mask to select entries up to a specific index
        def compute_mask(max_length, curr_length):
            arange = torch.arange(max_length, device=device).repeat((chords_gt.shape[0], 1)).permute(0, 1)
            lengths_stacked = curr_length.repeat((max_length, 1)).permute(1, 0)
            return arange <= lengths_stacked

        num_chords = num_chords.to(device)
        loss_chords = ce_loss(pred_chords.permute(0, 2, 1), chords_gt)
        mask_chord = compute_mask(max_num_chords, num_chords)
        loss_chords = torch.masked_select(loss_chords, mask_chord).mean()

        num_notes = num_chords * NOTES_PER_CHORD
        loss_melody_notes = ce_loss(pred_notes.permute(0, 2, 1), notes_gt)
        mask_melody = compute_mask(max_num_notes, num_notes)
        loss_melody = torch.masked_select(loss_melody_notes, mask_melody).mean()

        if epoch < MELODY_EPOCH_DELAY:
            loss_melody = 0

        loss_kl = kl
        loss_tempo = l1_loss(pred_tempo[:, 0], tempo_gt) / 5
        loss_key = ce_loss(pred_key, key_gt).mean() / 30
        loss_mode = ce_loss(pred_mode, mode_gt).mean() / 10
        loss_valence = l1_loss(pred_valence[:, 0], valence_gt) / 5
        loss_energy = l1_loss(pred_energy[:, 0], energy_gt) / 5
        loss_total = loss_chords + loss_kl + loss_melody + loss_tempo + loss_key + loss_mode + loss_energy + loss_valence

        return loss_total, loss_chords, loss_kl, loss_melody

    print(f"Starting training: {name}")
    epoch = 0
    while epoch < MAX_EPOCHS:
        epochs.append(epoch)

        print(f"== Epoch {epoch} ==")
        ep_train_losses_chords, ep_train_losses_melodies, ep_train_losses_kl = [], [], []
        ep_val_losses_chords, ep_val_losses_melodies, ep_val_losses_kl = [], [], []

        sampling_rate_chords = 0
        sampling_rate_melodies = 0

        # TRAINING
        model.train()
        for batch, data in enumerate(train_dataloader):
            loss, loss_chords, kl_loss, loss_melody = compute_loss(data)

            ep_train_losses_chords.append(loss_chords)
            ep_train_losses_melodies.append(loss_melody)
            ep_train_losses_kl.append(kl_loss)

            optimizer.zero_grad()
            loss.backward()

            optimizer.step()
            loss = loss.item()
            print(f"\tBatch {batch}:\tLoss {loss:.3f} (C: {loss_chords:.3f} + KL: {kl_loss:.3f} + M: {loss_melody:.3f})")

        # VALIDATION
        model.eval()
        for batch, data in enumerate(val_dataloader):
            with torch.no_grad():
                loss, loss_chords, kl_loss, loss_melody = compute_loss(data)

                ep_val_losses_chords.append(loss_chords)
                ep_val_losses_melodies.append(loss_melody)
                ep_val_losses_kl.append(kl_loss)

        epoch += 1

        ep_train_loss_chord = sum(ep_train_losses_chords) / len(ep_train_losses_chords)
        ep_train_loss_melody = sum(ep_train_losses_melodies) / len(ep_train_losses_melodies)
        ep_train_loss_kl = sum(ep_train_losses_kl) / len(ep_train_losses_kl)

        ep_val_loss_chord = sum(ep_val_losses_chords) / len(ep_val_losses_chords)
        ep_val_loss_melody = sum(ep_val_losses_melodies) / len(ep_val_losses_melodies)
        ep_val_loss_kl = sum(ep_val_losses_kl) / len(ep_val_losses_kl)

        print(f"Epoch chord loss: {ep_train_loss_chord:.3f}, melody loss: {ep_train_loss_melody:.3f}, KL: {ep_train_loss_kl:.3f}")
        print(f"VALIDATION: epoch chord loss: {ep_val_loss_chord:.3f}, melody loss: {ep_val_loss_melody:.3f}, KL: {ep_val_loss_kl:.3f}")

        train_losses_chords.append(ep_train_loss_chord)
        train_losses_melodies.append(ep_train_loss_melody)
        train_losses_kl.append(ep_train_loss_kl)

        val_losses_chords.append(ep_val_loss_chord)
        val_losses_melodies.append(ep_val_loss_melody)
        val_losses_kl.append(ep_val_loss_kl)

        axs = [[Axes(), Axes()], [Axes(), Axes()]]
        # Chords loss
        axs[0][0].plot(epochs, train_losses_chords, label='Train', color='royalblue')
        axs[0][0].plot(epochs, val_losses_chords, label='Val', color='royalblue', linestyle='dotted')
        # Melody loss
        axs[0][1].plot(epochs, train_losses_melodies, label='Train', color='royalblue')
        axs[0][1].plot(epochs, val_losses_melodies, label='Val', color='royalblue', linestyle='dotted')


train(Songs(16), Lofi2Lofi(), "lofi2lofi")
