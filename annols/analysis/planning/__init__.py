"""Sequential and plans: annols plan, studies in rounds, the adaptive pair sampler, null studies."""
