"""The admin's channel form reads an API address the way the channel pages do."""

from __future__ import annotations

from conversation.admin import ChannelSessionForm
from conversation.forms import WahaChannelForm


def test_admin_channel_address_without_a_scheme_is_https_like_the_channel_pages() -> None:
    admin_field = ChannelSessionForm.base_fields["api_base_url"]
    page_field = WahaChannelForm.base_fields["api_base_url"]
    typed = "waha.example.com.br/api"
    assert admin_field.clean(typed) == page_field.clean(typed) == f"https://{typed}"
    # An explicit scheme is kept, and the admin may leave the address empty (Meta channels).
    assert admin_field.clean("http://10.0.0.5:3000") == "http://10.0.0.5:3000"
    assert admin_field.clean("") == ""
