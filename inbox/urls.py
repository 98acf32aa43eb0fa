from django.urls import path

from inbox import views

app_name = "inbox"
urlpatterns = [
    path("fila/", views.queue, name="queue"),
    path("ajustes/", views.inbox_settings, name="settings"),
    path("ajustes/etiquetas/", views.label_create, name="label_create"),
    path("ajustes/etiquetas/<uuid:label_id>/excluir/", views.label_delete, name="label_delete"),
    path("ajustes/respostas/", views.canned_reply_create, name="canned_reply_create"),
    path(
        "ajustes/respostas/<uuid:canned_reply_id>/excluir/",
        views.canned_reply_delete,
        name="canned_reply_delete",
    ),
    path("conversas/<uuid:conversation_id>/", views.conversation_panel, name="conversation_panel"),
    path(
        "conversas/<uuid:conversation_id>/mensagens/",
        views.conversation_messages,
        name="conversation_messages",
    ),
    path(
        "conversas/<uuid:conversation_id>/responsavel/",
        views.conversation_assign,
        name="conversation_assign",
    ),
    path(
        "conversas/<uuid:conversation_id>/para-mim/",
        views.conversation_assign_me,
        name="conversation_assign_me",
    ),
    path(
        "conversas/<uuid:conversation_id>/resolver/",
        views.conversation_resolve,
        name="conversation_resolve",
    ),
    path(
        "conversas/<uuid:conversation_id>/etiquetas/<uuid:label_id>/",
        views.conversation_label_toggle,
        name="conversation_label_toggle",
    ),
    path(
        "conversas/<uuid:conversation_id>/notas/",
        views.conversation_note_add,
        name="conversation_note_add",
    ),
    path(
        "conversas/<uuid:conversation_id>/respostas-prontas/",
        views.conversation_canned_replies,
        name="conversation_canned_replies",
    ),
    path("contatos/<uuid:contact_id>/", views.contact_detail, name="contact_detail"),
    path("contatos/<uuid:contact_id>/editar/", views.contact_edit, name="contact_edit"),
    path("contatos/<uuid:contact_id>/notas/", views.contact_note_add, name="contact_note_add"),
]
