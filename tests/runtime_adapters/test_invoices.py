"""Demo invoices: the load_invoices command, the lookup with the default, and the admin."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client

from accounts.models import AuditLog
from conversation.models import Contact, DemoInvoice
from conversation.runtime_adapters.invoices import (
    InvoiceError,
    contact_invoice,
    demo_invoice_save,
    primary_msisdn,
    validate_invoice,
)
from tests import factories

from .conftest import load_invoice


@pytest.fixture
def org(db: Any) -> Any:
    return factories.make_org("Fatura")


@pytest.fixture
def invoice_file(tmp_path: Any) -> Any:
    path = tmp_path / "fatura.json"
    path.write_text(json.dumps(load_invoice()), encoding="utf-8")
    return path


def load(*args: str) -> str:
    out = StringIO()
    call_command("load_invoices", *args, stdout=out)
    return out.getvalue()


def test_load_invoices_creates_the_contact_and_its_invoice(org, invoice_file):
    output = load("+55 (11) 98765-4321", str(invoice_file), "--org", org.slug)
    contact = Contact.objects.get(organization=org)
    assert contact.phone == "5511987654321"
    invoice = DemoInvoice.objects.get(organization=org)
    assert invoice.contact == contact and invoice.detail == load_invoice()
    assert "5511987654321" in output and "2 linha(s)" in output
    audit = AuditLog.objects.get(action="demo_invoice.create")
    assert audit.diff == {"contact_id": str(contact.pk), "lines": 2}


def test_load_invoices_default_replaces_the_organizations_default(org, invoice_file, tmp_path):
    load("default", str(invoice_file), "--org", org.slug)
    smaller = {"11999990000": {"SVA Detalhe Total": [{"desc": "Tamboro", "valor": "R$ 1,00"}]}}
    other = tmp_path / "outra.json"
    other.write_text(json.dumps(smaller), encoding="utf-8")
    output = load("padrão", str(other), "--org", org.slug)
    invoice = DemoInvoice.objects.get(organization=org)
    assert invoice.contact is None and invoice.detail == smaller
    assert "organização (padrão)" in output
    assert AuditLog.objects.filter(action="demo_invoice.replace").count() == 1


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{não é json", "não é um JSON válido"),
        ("[1, 2]", "objeto JSON"),
        ('{"Fatura Resumo": {}}', "pelo menos uma linha"),
        ('{"1199": {"SVA Detalhe Total": [{"valor": "R$ 1"}]}}', "precisa de 'desc'"),
        ('{"1199": {"SVA Detalhe Total": {"desc": "x"}}}', "deve ser uma lista"),
    ],
)
def test_load_invoices_refuses_what_the_runtime_cannot_read(org, tmp_path, content, message):
    path = tmp_path / "ruim.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CommandError, match=message):
        load("5511987654321", str(path), "--org", org.slug)
    assert not DemoInvoice.objects.exists()


def test_load_invoices_needs_an_existing_organization_and_file(org, invoice_file):
    with pytest.raises(CommandError, match="Organização não encontrada"):
        load("default", str(invoice_file), "--org", "nao-existe")
    with pytest.raises(CommandError, match="Não consegui ler"):
        load("default", "/nao/existe.json", "--org", org.slug)


def test_a_contacts_invoice_wins_over_the_default_and_nothing_means_none(org):
    contact = Contact.objects.create(organization=org, phone="5511900000009")
    assert contact_invoice(organization_id=org.pk, contact_id=contact.pk) is None
    demo_invoice_save(organization=org, phone=None, detail=load_invoice(), actor=None)
    found = contact_invoice(organization_id=org.pk, contact_id=contact.pk)
    assert found is not None and found.source == "default"
    own = {"11900000009": {"SVA Detalhe Total": [{"desc": "Tamboro"}]}}
    demo_invoice_save(organization=org, phone=contact.phone, detail=own, actor=None)
    found = contact_invoice(organization_id=org.pk, contact_id=contact.pk)
    assert found is not None and (found.source, found.detail) == ("contact", own)
    other_org = factories.make_org("Outra")
    assert contact_invoice(organization_id=other_org.pk, contact_id=contact.pk) is None


@pytest.mark.parametrize(
    ("phone", "line"),
    [
        ("5511912345678", "11912345678"),  # writes from the second line
        ("11912345678", "11912345678"),
        ("5511988887777", "11987654321"),  # not on the invoice: the first line
    ],
)
def test_the_active_line_is_the_customers_own_when_on_the_invoice(phone, line):
    assert primary_msisdn(load_invoice(), phone) == line


def test_an_invoice_without_lines_is_refused():
    with pytest.raises(InvoiceError):
        validate_invoice({"Fatura Resumo": {"total": "R$ 1"}})


@pytest.fixture
def superuser_client(org: Any, settings: Any) -> Client:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    user = get_user_model().objects.create_superuser("root", "root@x.test", "senha-123")
    client = Client()
    client.force_login(user)
    return client


def test_admin_validates_a_demo_invoice_before_saving(org, superuser_client):
    url = "/admin/conversation/demoinvoice/add/"
    bad = superuser_client.post(url, {"organization": org.pk, "detail": '"texto"'})
    assert bad.status_code == 200 and "objeto JSON" in bad.content.decode()
    good = superuser_client.post(
        url, {"organization": org.pk, "detail": json.dumps(load_invoice())}
    )
    assert good.status_code == 302
    invoice = DemoInvoice.objects.get()
    assert invoice.contact is None
    assert AuditLog.objects.filter(action="demo_invoice.create").exists()


def test_admin_shows_the_action_log_read_only(org, superuser_client):
    assert superuser_client.get("/admin/conversation/runtimeaction/").status_code == 200
    assert superuser_client.get("/admin/conversation/runtimeaction/add/").status_code == 403
