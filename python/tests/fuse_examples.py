"""Functions written for cupy.fuse that the cpu and gpu tiers of ukern.fuse both run."""


def batchnorm(xp):
    """Batch normalisation with running statistics over (N, C, H, W), calling xp.*: argument
    views, a computed value indexed back to its reduced axes, in-place updates of arguments."""
    def f(x, gamma, beta, running_mean, running_var, size, adjust):
        expander = (None, slice(None), None, None)
        gamma, beta = gamma[expander], beta[expander]
        mean = xp.sum(x, axis=(0, 2, 3)) / size
        diff = x - mean[expander]                      # a computed value indexed: keepdims again
        var = xp.sum(diff * diff, axis=(0, 2, 3)) / size
        inv_std = 1. / xp.sqrt(var + 2e-5)
        y = gamma * diff * inv_std[expander] + beta
        running_mean *= 0.9
        running_mean += (1 - 0.9) * mean
        running_var *= 0.9
        running_var += (1 - 0.9) * adjust * var
        return y
    return f
