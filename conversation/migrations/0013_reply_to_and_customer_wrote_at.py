from django.db import migrations, models
from django.db.models import F


def customer_wrote_when_it_arrived(apps, schema_editor):
    # Before this column the window counted from arrival: keep every open window open.
    Conversation = apps.get_model("conversation", "Conversation")
    Conversation.objects.filter(last_inbound_at__isnull=False).update(
        customer_wrote_at=F("last_inbound_at")
    )


class Migration(migrations.Migration):
    dependencies = [
        ("conversation", "0012_contact_whatsapp_lid"),
    ]

    operations = [
        migrations.AddField(
            model_name="message",
            name="reply_to",
            field=models.CharField(blank=True, max_length=200, null=True),
        ),
        migrations.AddField(
            model_name="conversation",
            name="customer_wrote_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(customer_wrote_when_it_arrived, migrations.RunPython.noop),
    ]
