import torch
import torch.nn as nn


class Stack(nn.Module):
    def __init__(self, dims=(8, 16, 4)):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:])])
        self.weights = nn.Parameter(torch.ones(dims[-1]))
        self.input, self.output = nn.Identity(), nn.Linear(dims[-1], dims[-1])  # Keras names, as one tuple
        self.name = "stack"
        self.trainable = True

    def forward(self, input):
        x = self.input(input)
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = torch.relu(x)
        return self.output(x * self.weights)


if __name__ == "__main__":
    print(Stack()(torch.randn(2, 8)))
