from django.urls import path

from conversation import views

app_name = "conversation"
urlpatterns = [
    path("", views.conversations, name="conversations"),
    path(
        "conversas/<uuid:conversation_id>/",
        views.conversation_detail,
        name="conversation_detail",
    ),
    path(
        "conversas/<uuid:conversation_id>/assumir/",
        views.conversation_take_over,
        name="conversation_take_over",
    ),
    path(
        "mensagens/<uuid:message_id>/reenviar/",
        views.message_resend,
        name="message_resend",
    ),
    path("transbordos/", views.handoffs, name="handoffs"),
    path("transbordos/contador/", views.handoff_badge, name="handoff_badge"),
    path("transbordos/<uuid:handoff_id>/", views.handoff_detail, name="handoff_detail"),
    path(
        "transbordos/<uuid:handoff_id>/mensagens/",
        views.handoff_messages,
        name="handoff_messages",
    ),
    path("transbordos/<uuid:handoff_id>/responder/", views.handoff_reply, name="handoff_reply"),
    path("transbordos/<uuid:handoff_id>/devolver/", views.handoff_return, name="handoff_return"),
    path("agentes/", views.agents, name="agents"),
    path("agentes/novo/", views.agent_create, name="agent_create"),
    path("agentes/<uuid:agent_id>/", views.agent_detail, name="agent_detail"),
    path(
        "agentes/<uuid:agent_id>/versoes/<uuid:version_id>/publicar/",
        views.agent_version_publish,
        name="agent_version_publish",
    ),
    path("conhecimento/", views.knowledge, name="knowledge"),
    path("conhecimento/novo/", views.knowledge_create, name="knowledge_create"),
    path("conhecimento/<uuid:document_id>/", views.knowledge_edit, name="knowledge_edit"),
    path(
        "conhecimento/<uuid:document_id>/excluir/",
        views.knowledge_delete,
        name="knowledge_delete",
    ),
    path("canais/", views.channels, name="channels"),
    path("canais/novo/waha/", views.channel_connect_waha, name="channel_connect_waha"),
    path("canais/novo/meta/", views.channel_connect_meta, name="channel_connect_meta"),
    path("canais/<uuid:channel_id>/", views.channel_detail, name="channel_detail"),
    path("canais/<uuid:channel_id>/testar/", views.channel_test, name="channel_test"),
    path("canais/<uuid:channel_id>/ativo/", views.channel_set_active, name="channel_set_active"),
    path("canais/<uuid:channel_id>/segredo/", views.channel_new_secret, name="channel_new_secret"),
    path("canais/<uuid:channel_id>/atendimento/", views.channel_assign, name="channel_assign"),
    path("canais/<uuid:channel_id>/modelos/", views.channel_templates, name="channel_templates"),
    path(
        "canais/<uuid:channel_id>/modelos/sincronizar/",
        views.channel_templates_sync,
        name="channel_templates_sync",
    ),
    path("mensagens/<uuid:message_id>/arquivo/", views.message_media, name="message_media"),
    path(
        "conversas/<uuid:conversation_id>/arquivo/",
        views.conversation_send_media,
        name="conversation_send_media",
    ),
    path(
        "conversas/<uuid:conversation_id>/modelo/",
        views.conversation_send_template,
        name="conversation_send_template",
    ),
    path("simulador/", views.simulator, name="simulator"),
    path("simulador/chat/", views.simulator_chat, name="simulator_chat"),
    path("simulador/enviar/", views.simulator_send, name="simulator_send"),
    path("simulador/canal/", views.simulator_channel_create, name="simulator_channel_create"),
]
