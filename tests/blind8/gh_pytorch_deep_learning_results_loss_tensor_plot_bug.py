# Source: https://github.com/mrdbourke/pytorch-deep-learning/issues/583
"""The course's 04_pytorch_custom_datasets notebook as the reporter ran it: train_step() sums
the batches' losses as tensors (the reporter had left out the .item() the course uses), so
train() stores in results["train_loss"] a tensor that requires grad for every epoch. The
notebook's plot_loss_curves() then hands the lists to matplotlib, which converts them with
numpy: "Can't call numpy() on Tensor that requires grad". TinyVGG is the course's model made
small; the food images are random tensors, and the plotting is a stand-in that converts the
lists as matplotlib's plot() does. The running total train_loss links every batch's graph
(GG202, observed by torch) before the numpy conversion raises."""
import numpy as np
import torch
from torch import nn


class TinyVGG(nn.Module):
    def __init__(self, input_shape: int, hidden_units: int, output_shape: int) -> None:
        super().__init__()
        self.conv_block_1 = nn.Sequential(
            nn.Conv2d(input_shape, hidden_units, kernel_size=3, stride=1, padding=1),
            nn.ReLU(),
            nn.Conv2d(hidden_units, hidden_units, kernel_size=3, stride=1, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(kernel_size=2, stride=2))
        self.conv_block_2 = nn.Sequential(
            nn.Conv2d(hidden_units, hidden_units, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.Conv2d(hidden_units, hidden_units, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2))
        self.classifier = nn.Sequential(
            nn.Flatten(),
            nn.Linear(in_features=hidden_units * 4 * 4, out_features=output_shape))

    def forward(self, x: torch.Tensor):
        return self.classifier(self.conv_block_2(self.conv_block_1(x)))


def train_step(model, dataloader, loss_fn, optimizer):
    model.train()
    train_loss, train_acc = 0, 0
    for batch, (X, y) in enumerate(dataloader):
        y_pred = model(X)
        loss = loss_fn(y_pred, y)
        train_loss += loss  # expect: GG202
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        y_pred_class = torch.argmax(torch.softmax(y_pred, dim=1), dim=1)
        train_acc += (y_pred_class == y).sum().item() / len(y_pred)
    train_loss = train_loss / len(dataloader)
    train_acc = train_acc / len(dataloader)
    return train_loss, train_acc


def test_step(model, dataloader, loss_fn):
    model.eval()
    test_loss, test_acc = 0, 0
    with torch.inference_mode():
        for batch, (X, y) in enumerate(dataloader):
            test_pred_logits = model(X)
            loss = loss_fn(test_pred_logits, y)
            test_loss += loss.item()
            test_pred_labels = test_pred_logits.argmax(dim=1)
            test_acc += ((test_pred_labels == y).sum().item() / len(test_pred_labels))
    test_loss = test_loss / len(dataloader)
    test_acc = test_acc / len(dataloader)
    return test_loss, test_acc


def train(model, train_dataloader, test_dataloader, optimizer, loss_fn=nn.CrossEntropyLoss(), epochs=5):
    results = {"train_loss": [], "train_acc": [], "test_loss": [], "test_acc": []}
    for epoch in range(epochs):
        train_loss, train_acc = train_step(model, train_dataloader, loss_fn, optimizer)
        test_loss, test_acc = test_step(model, test_dataloader, loss_fn)
        print(f"Epoch: {epoch+1} | train_loss: {train_loss:.4f} | train_acc: {train_acc:.4f} | "
              f"test_loss: {test_loss:.4f} | test_acc: {test_acc:.4f}")
        results["train_loss"].append(train_loss)
        results["train_acc"].append(train_acc)
        results["test_loss"].append(test_loss)
        results["test_acc"].append(test_acc)
    return results


def plot(x, y, label):
    """What matplotlib's plot() does with its data: numpy arrays of it."""
    return np.asarray(x), np.asarray(y), label  # expect: GG107


def plot_loss_curves(results):
    loss = results['train_loss']
    test_loss = results['test_loss']
    epochs = range(len(results['train_loss']))
    plot(epochs, loss, label='train_loss')
    plot(epochs, test_loss, label='test_loss')


def batches(n, batch_size=4):
    return [(torch.randn(batch_size, 3, 16, 16), torch.randint(0, 3, (batch_size,))) for _ in range(n)]


torch.manual_seed(42)
model_0 = TinyVGG(input_shape=3, hidden_units=4, output_shape=3)
optimizer = torch.optim.Adam(params=model_0.parameters(), lr=0.001)
model_0_results = train(model=model_0, train_dataloader=batches(3), test_dataloader=batches(2),
                        optimizer=optimizer, loss_fn=nn.CrossEntropyLoss(), epochs=2)
plot_loss_curves(model_0_results)
