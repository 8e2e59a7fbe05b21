# Source: https://github.com/pyg-team/pytorch_geometric/pull/9996
"""PyG's examples/llm/tech_qa.py with the fix of the follow-up pyg-team/pytorch_geometric#10272
("TXT2KG skip training when frozen + no gnn"): when the LLM is frozen and there is no GNN, nothing
can be trained, so train() returns the model without running backward. A tiny causal language
model stands in for torch_geometric.llm.models.LLM; the train loop, the args and get_loss follow
the example, with random question/answer token batches instead of the TechQA dataset."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class LLM(nn.Module):
    """Stands in for torch_geometric's LLM wrapper: forward(question, answer) returns the LM loss."""

    def __init__(self, model_name, vocab_size=64, hidden=32):
        super().__init__()
        self.model_name = model_name
        self.word_embedding = nn.Embedding(vocab_size, hidden)
        self.llm = nn.GRU(hidden, hidden, batch_first=True)
        self.lm_head = nn.Linear(hidden, vocab_size)

    def forward(self, question, answer, context=None):
        tokens = torch.cat([question, answer], dim=1)
        h, _ = self.llm(self.word_embedding(tokens[:, :-1]))
        logits = self.lm_head(h[:, question.size(1) - 1:])
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)), answer.reshape(-1))


def get_loss(model, batch):
    return model(batch['question'], batch['answer'], batch['desc'])


def train(args, train_loader):
    llm = LLM(model_name=args.llm_generator_name)
    if args.freeze_llm:
        for param in llm.parameters():
            param.requires_grad = False
    model = llm  # --num_gnn_layers 0: no GNN, so no GRetriever around the LLM
    if args.freeze_llm and args.num_gnn_layers == 0:
        print('LLM frozen and no GNN: nothing to train, skipping training')
        return model

    params = [p for _, p in model.named_parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW([{'params': params, 'lr': args.lr, 'weight_decay': 0.05}],
                                  betas=(0.9, 0.95))
    for epoch in range(args.epochs):
        model.train()
        epoch_loss = 0
        for step, batch in enumerate(train_loader):
            optimizer.zero_grad()
            loss = get_loss(model, batch)
            loss.backward()
            optimizer.step()
            epoch_loss += float(loss)
        print(f'Epoch: {epoch + 1}|{args.epochs}, Train Loss: {epoch_loss / len(train_loader):.4f}')
    return model


parser = argparse.ArgumentParser()
parser.add_argument('--llm_generator_name', type=str, default='meta-llama/Meta-Llama-3.1-8B-Instruct')
parser.add_argument('--num_gnn_layers', type=int, default=0)
parser.add_argument('--freeze_llm', action='store_true')
parser.add_argument('--lr', type=float, default=1e-5)
parser.add_argument('--epochs', type=int, default=2)
args = parser.parse_args(['--freeze_llm'])

train_loader = [{'question': torch.randint(0, 64, (2, 6)), 'answer': torch.randint(0, 64, (2, 4)),
                 'desc': None} for _ in range(2)]
model = train(args, train_loader)
