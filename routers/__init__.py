"""Intent routers: route a channel's conversations to one of several agents."""
